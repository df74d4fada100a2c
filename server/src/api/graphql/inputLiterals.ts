/**
 * The rules of any input of svc (inputRules.ts) for what a query's own text holds: variables arrive
 * in the JSON body and are checked with it, but a value written in the query (`stringValue: "…"`,
 * `numberValue: 12345678901234567890`) would otherwise reach the store unchecked. A string literal
 * may not hold U+0000 (GraphQL's lexer already refuses a lone surrogate); a number literal must be
 * kept exactly as written.
 *
 * A list written in the query holds at most {@link GRAPHQL_INPUT_LIMITS.listItems} items, as one in
 * the variables does (variablesShape.ts).
 *
 * Also refused here: an operation of a type the schema has no root for (`subscription`), which
 * graphql-js refuses when it executes and the compiled executor (graphql-jit) throws on.
 */
import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { numberTextProblem, stringProblem } from '../inputRules.ts';
import { GRAPHQL_INPUT_LIMITS } from './limits.ts';

export function inputLiteralsRule(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node) {
      const problem = stringProblem(node.value);
      if (problem) context.reportError(new GraphQLError(`A string in the query ${problem}`, { nodes: node }));
    },
    IntValue(node) {
      const problem = numberTextProblem(node.value);
      if (problem) context.reportError(new GraphQLError(`A number in the query: ${problem}`, { nodes: node }));
    },
    FloatValue(node) {
      const problem = numberTextProblem(node.value);
      if (problem) context.reportError(new GraphQLError(`A number in the query: ${problem}`, { nodes: node }));
    },
    ListValue(node) {
      const max = GRAPHQL_INPUT_LIMITS.listItems;
      if (node.values.length > max) context.reportError(new GraphQLError(`A list in the query may hold at most ${max} items, got ${node.values.length}`, { nodes: node }));
    },
    OperationDefinition(node) {
      if (!context.getSchema().getRootType(node.operation)) {
        context.reportError(new GraphQLError(`Schema is not configured to execute ${node.operation} operation.`, { nodes: node }));
      }
    },
  };
}

/** {@link inputLiteralsRule} with GraphQL's own validation rules (its result is cached with theirs). */
export function useInputLiteralRules(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(inputLiteralsRule);
    },
  };
}
