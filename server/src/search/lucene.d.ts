/** The `lucene` package (a PEG parser of Lucene query syntax) ships no types: what svc uses of it. */
declare module 'lucene' {
  const lucene: { parse(query: string): unknown };
  export default lucene;
}
