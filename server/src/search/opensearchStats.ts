/**
 * What is counted of bulk items OpenSearch refused for good (e.g. a value that does not fit its
 * mapping), for /metrics. A module of its own so that the metrics read it without loading OpenSearch's
 * client (postgres mode never loads it).
 */
export const opensearchStats = { rejected: 0, mappingConflicts: 0 };
