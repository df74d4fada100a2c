/**
 * graphql-jit coerces variables against their declared types before the compiled executor runs, but
 * its messages name the input fields it walked as if they were variables (`Variable "$negated" got
 * invalid value …` for a `$filters` list) and say nowhere which value was wrong; graphql-js names the
 * variable and the path to the value (`Variable "$f" got invalid value "yes" at "f[0].and[0].negated";
 * Boolean cannot represent a non boolean value: "yes"`). When graphql-jit refuses the variables (its
 * answer is errors without `data`: nothing ran), graphql-js checks them again and its messages are
 * answered instead, with GraphQL's validation code, as for a query that does not fit the schema.
 * Variables that pass are coerced once, by graphql-jit (graphql-js doing it for every request as well
 * cost about a hundredth of a search request).
 */
import { getOperationAST, getVariableValues, GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** At most this many variable errors are reported for one request. */
const MAX_ERRORS = 20;

/** graphql-js's errors for the variables of an operation; undefined when it accepts them. */
function variableErrors(args: ExecutionArgs): GraphQLError[] | undefined {
  const definitions = getOperationAST(args.document, args.operationName)?.variableDefinitions;
  if (!definitions?.length) return undefined;
  const coerced = getVariableValues(args.schema, definitions, (args.variableValues ?? {}) as Record<string, unknown>, { maxErrors: MAX_ERRORS });
  return coerced.errors?.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
}

export function useVariableValues(): Plugin {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          const r = result as ExecutionResult;
          if ('data' in r || !r.errors?.length) return;
          const errors = variableErrors(args);
          if (errors) setResult({ errors });
        },
      };
    },
  };
}
