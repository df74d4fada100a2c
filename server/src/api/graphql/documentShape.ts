/**
 * The shape of a document's text, checked before graphql-js parses it: its length, and how deeply its
 * brackets nest. graphql-js's parser recurses once per level of selection sets, lists, input objects
 * and argument lists, and so do the validation rules, the compiled executor and the serialiser after
 * it: `{ a { a { a …` ten thousand deep overflowed the stack before the token limit was reached (a
 * masked 500), and a list literal three thousand deep likewise. Every nested construct of GraphQL's
 * grammar is bracketed by `{`, `[` or `(`, so counting them (outside strings and comments) bounds
 * the depth of everything that walks the parsed document. A refusal is a parse error
 * (`GRAPHQL_PARSE_FAILED`), as the token limit's is.
 */
import { GraphQLError, type Source } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { GRAPHQL_LIMITS } from './limits.ts';

const OPENING = new Set(['{', '[', '(']);
const CLOSING = new Set(['}', ']', ')']);

/** The index of the `"` closing the string opened before `from`, or of the line end where it stops unterminated. */
function stringEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '"' || c === '\n' || c === '\r') return i;
  }
  return text.length;
}

/** The index of the last `"` of the `"""` closing the block string opened before `from` (`\"""` is escaped). */
function blockStringEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text.startsWith('\\"""', i)) i += 3;
    else if (text.startsWith('"""', i)) return i + 2;
  }
  return text.length;
}

/** The index of the end of the comment starting at `from` (GraphQL's comments end at a line end). */
function commentEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) if (text[i] === '\n' || text[i] === '\r') return i;
  return text.length;
}

/**
 * Why the document `text` is refused before it is parsed, or undefined: longer than
 * {@link GRAPHQL_LIMITS.length} characters, or brackets nested deeper than {@link GRAPHQL_LIMITS.nesting}.
 * Unbalanced brackets and unterminated strings are left for the parser to report.
 *
 *   documentShapeProblem('{ a(b: [[1]]) { c } }') // undefined: 4 levels
 */
export function documentShapeProblem(text: string, limits: { length: number; nesting: number } = GRAPHQL_LIMITS): string | undefined {
  if (text.length > limits.length) {
    return `The document is ${text.length} characters long, more than the ${limits.length} a document may have: send long values as variables`;
  }
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '#') i = commentEnd(text, i + 1);
    else if (c === '"') i = text.startsWith('"""', i) ? blockStringEnd(text, i + 3) : stringEnd(text, i + 1);
    else if (OPENING.has(c)) {
      if (++depth > limits.nesting) {
        return `The document nests deeper than ${limits.nesting} levels of braces, brackets and parentheses (selections, lists, input objects, arguments)`;
      }
    } else if (CLOSING.has(c) && depth > 0) depth--;
  }
  return undefined;
}

/**
 * Checks the shape of a document before it is parsed. The check wraps the parser (graphql-armor's,
 * which counts tokens): a document found in yoga's parse cache is not checked again, and a refused
 * one is cached as refused.
 */
export function useDocumentShape(): Plugin {
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source: string | Source, options) => {
        const problem = documentShapeProblem(typeof source === 'string' ? source : source.body);
        if (problem) throw new GraphQLError(`Syntax Error: ${problem}.`);
        return parseFn(source, options);
      });
    },
  };
}
