/**
 * Access tokens over GraphQL (DataHub's `listAccessTokens` and `revokeAccessToken`, what its
 * `datahub-gc` source calls to revoke expired tokens): thin adapters over the token service. A token
 * is shown as DataHub's `AccessTokenMetadata`, its URN `urn:li:dataHubAccessToken:<id>`; revoked
 * tokens are not listed (DataHub deletes them).
 */
import { Violations } from '../../../shared/errors.ts';
import type { TokenInfo, TokenQuery } from '../../../auth/tokens.ts';
import type { GraphQLContext } from '../context.ts';
import type { FacetFilterInput } from '../inputs.ts';

interface ListAccessTokenInput {
  start?: number | null;
  count?: number | null;
  filters?: FacetFilterInput[] | null;
}

const DEFAULT_COUNT = 20;
const FIELDS = 'expiresAt (LESS_THAN, LESS_THAN_OR_EQUAL_TO, GREATER_THAN, GREATER_THAN_OR_EQUAL_TO), actorUrn or ownerUrn (EQUAL)';

/**
 * DataHub's token filters as a token query: `expiresAt` compared with one time in epoch milliseconds
 * (`{"field": "expiresAt", "values": ["1718352000000"], "condition": "LESS_THAN"}`), `actorUrn` and
 * `ownerUrn` equal to one URN. VALIDATION naming every filter that is none of these.
 */
export function tokenQuery(filters: FacetFilterInput[] | null | undefined): TokenQuery {
  const query: TokenQuery = { active: true };
  const violations = new Violations();
  for (const [i, f] of (filters ?? []).entries()) {
    const where = `filters[${i}]`;
    const values = f.values ?? (f.value !== undefined && f.value !== null ? [f.value] : []);
    const condition = f.condition ?? 'EQUAL';
    if (f.negated) violations.add(`${where}: negated filters are not taken on tokens`);
    if (values.length !== 1) {
      violations.add(`${where}: expected one value, got ${values.length}`);
      continue;
    }
    const value = values[0]!;
    if (f.field === 'expiresAt') {
      if (!/^\d+$/.test(value)) violations.add(`${where}: expiresAt is compared with a time in epoch milliseconds, got ${JSON.stringify(value)}`);
      const at = Number(value);
      if (condition === 'LESS_THAN' || condition === 'LESS_THAN_OR_EQUAL_TO') query.expiresBefore = { at, inclusive: condition === 'LESS_THAN_OR_EQUAL_TO' };
      else if (condition === 'GREATER_THAN' || condition === 'GREATER_THAN_OR_EQUAL_TO') query.expiresAfter = { at, inclusive: condition === 'GREATER_THAN_OR_EQUAL_TO' };
      else violations.add(`${where}: expiresAt takes LESS_THAN, LESS_THAN_OR_EQUAL_TO, GREATER_THAN or GREATER_THAN_OR_EQUAL_TO, not ${condition}`);
    } else if (f.field === 'actorUrn' || f.field === 'ownerUrn') {
      if (condition !== 'EQUAL') violations.add(`${where}: ${f.field} takes EQUAL, not ${condition}`);
      if (f.field === 'actorUrn') query.actor = value;
      else query.createdBy = value;
    } else {
      violations.add(`${where}: tokens are filtered on ${FIELDS}, not on ${JSON.stringify(f.field)}`);
    }
  }
  violations.throwIfAny();
  return query;
}

/** A token as DataHub's `AccessTokenMetadata`. */
function metadata(t: TokenInfo) {
  return {
    urn: `urn:li:dataHubAccessToken:${t.id}`,
    type: 'ACCESS_TOKEN',
    id: t.id,
    name: t.name,
    description: null,
    actorUrn: `urn:li:corpuser:${t.name}`,
    ownerUrn: t.createdBy,
    createdAt: Date.parse(t.createdAt),
    expiresAt: t.expiresAt === null ? null : Date.parse(t.expiresAt),
  };
}

export const tokenResolvers = {
  Query: {
    async listAccessTokens(_: unknown, { input }: { input: ListAccessTokenInput }, ctx: GraphQLContext) {
      const query = tokenQuery(input.filters);
      const start = Math.max(0, input.start ?? 0);
      const count = Math.max(0, input.count ?? DEFAULT_COUNT);
      const tokens = await ctx.catalog.tokens.list(ctx.principal, query);
      const page = tokens.slice(start, start + count);
      return { start, count: page.length, total: tokens.length, tokens: page.map(metadata) };
    },
  },
  Mutation: {
    async revokeAccessToken(_: unknown, { tokenId }: { tokenId: string }, ctx: GraphQLContext) {
      await ctx.catalog.tokens.revoke(ctx.principal, tokenId);
      return true;
    },
  },
};
