/**
 * Validation results cached by parsed document (yoga's parse cache gives a query text given again the
 * same document). Yoga's own validation cache is switched off: it keys its results by the names of
 * the validation rules too, read and joined into a string on every request (GraphQL's rules and the
 * query limits', some thirty), which cost more than the lookup itself. Keying by document alone
 * holds because the rules are the same on every request: the plugins that add rules (the query
 * limits, input literals) add the same ones whatever the request, and there is one schema.
 */
import type { DocumentNode, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export function useValidationCache(): Plugin {
  const results = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  return {
    onValidate({ params, setResult }) {
      const known = results.get(params.documentAST);
      if (known) {
        setResult(known);
        return undefined;
      }
      return ({ result }) => {
        results.set(params.documentAST, result as readonly GraphQLError[]);
      };
    },
  };
}
