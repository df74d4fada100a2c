/**
 * Variables are checked against their declared types by graphql-js before the compiled executor
 * runs. graphql-jit coerces them too, but its messages name the input fields it walked as if they
 * were variables (`Variable "$negated" got invalid value …` for a `$filters` list) and say nowhere
 * which value was wrong; graphql-js names the variable and the path to the value (`Variable "$f"
 * got invalid value "yes" at "f[0].and[0].negated"; Boolean cannot represent a non boolean value:
 * "yes"`). Such a request runs nothing; its errors carry GraphQL's validation code, as a query that
 * does not fit the schema does.
 */
import { getOperationAST, getVariableValues, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** At most this many variable errors are reported for one request. */
const MAX_ERRORS = 20;

export function useVariableValues(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const definitions = getOperationAST(args.document, args.operationName)?.variableDefinitions;
      if (!definitions?.length) return;
      const coerced = getVariableValues(args.schema, definitions, (args.variableValues ?? {}) as Record<string, unknown>, { maxErrors: MAX_ERRORS });
      if (coerced.errors) {
        setResultAndStopExecution({
          errors: coerced.errors.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })),
        });
      }
    },
  };
}
