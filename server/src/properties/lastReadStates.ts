/**
 * The structured properties' states as the last write context read them (their definitions and
 * statuses, and those rows' texts): what a guess for a write to an entity this server has kept nothing
 * of relies on (SpeculativeState.guess). Never trusted: a guess puts the texts in its guards, so a
 * property changed since is caught by the write statement and read again, which refreshes what is here.
 */
import type { WriteContext } from './propertyStore.ts';
import type { PropertyState } from './valueRules.ts';

/** Properties remembered at most (all are dropped when more come: a read brings back those in use). */
const MAX_PROPERTIES = 10_000;

interface Remembered {
  state: PropertyState;
  /** The definition row's text. */
  definition: string;
  /** The status row's text; null when the property has none. */
  status: string | null;
}

export class LastReadStates {
  private readonly properties = new Map<string, Remembered>();

  /** Takes in what a write context read: the state of every property it holds, and the absence of those named it found none of. */
  remember(context: WriteContext, named: Iterable<string>): void {
    for (const urn of new Set([...named, ...context.properties.keys()])) {
      const state = context.properties.get(urn);
      const definition = context.texts.get(`${urn} propertyDefinition`);
      if (!state || definition === undefined) {
        this.properties.delete(urn);
        continue;
      }
      if (this.properties.size >= MAX_PROPERTIES && !this.properties.has(urn)) this.properties.clear();
      this.properties.set(urn, { state, definition, status: context.texts.get(`${urn} status`) ?? null });
    }
  }

  /**
   * The states and row texts of these properties, as a write context holds them; undefined unless
   * every one of them is remembered.
   */
  statesOf(urns: string[]): Pick<WriteContext, 'properties' | 'texts'> | undefined {
    const properties = new Map<string, PropertyState>();
    const texts = new Map<string, string>();
    for (const urn of urns) {
      const r = this.properties.get(urn);
      if (!r) return undefined;
      properties.set(urn, r.state);
      texts.set(`${urn} propertyDefinition`, r.definition);
      if (r.status !== null) texts.set(`${urn} status`, r.status);
    }
    return { properties, texts };
  }
}
