/**
 * Regions (seed 003): named, ordered groups of sections. Immutable: every operation returns a
 * new `Regions`, so the main turn and a summary request each derive exactly the regions they
 * need from one definition without affecting each other.
 *
 *   const main = mainTurnRegions();                               // standard-regions.ts
 *   const slim = main.withoutRegions(["working_set"]);
 *   const summary = main.withOnlyRegions(["summary_rules", "summary", "evicted"]);
 *   const custom = main.withRegion("notes", notesSection).withRegionalOrder(["core", "notes"]);
 *
 * Order rule: `withRegionalOrder(names)` puts the named regions first, in that order; the others
 * follow in their previous relative order. A region added by `withRegion` that is not yet in the
 * order goes last. The builder renders sections region by region in this order.
 */
import type { Section } from "./section.ts";

export class Regions {
  private constructor(
    private readonly byName: ReadonlyMap<string, readonly Section[]>,
    private readonly order: readonly string[],
  ) {}

  static empty(): Regions {
    return new Regions(new Map(), []);
  }

  /** Groups sections by their `region`, in first-appearance order. */
  static of(sections: readonly Section[]): Regions {
    let regions = Regions.empty();
    for (const section of sections) {
      regions = regions.withRegion(section.region, [...regions.sectionsOf(section.region), section]);
    }
    return regions;
  }

  /** Adds or replaces a region's sections. */
  withRegion(name: string, sections: Section | readonly Section[]): Regions {
    const list: readonly Section[] = Array.isArray(sections) ? [...sections] : [sections as Section];
    const byName = new Map(this.byName);
    byName.set(name, list);
    const order = this.order.includes(name) ? this.order : [...this.order, name];
    return new Regions(byName, order);
  }

  /** The named regions first, in this order; the rest keep their relative order after them. */
  withRegionalOrder(names: readonly string[]): Regions {
    const unknown = names.filter((n) => !this.byName.has(n));
    if (unknown.length > 0) throw new RangeError(`withRegionalOrder: no region named ${unknown.join(", ")} (have ${this.order.join(", ")})`);
    const first = [...new Set(names)];
    return new Regions(this.byName, [...first, ...this.order.filter((n) => !first.includes(n))]);
  }

  withoutRegions(names: readonly string[]): Regions {
    const drop = new Set(names);
    return new Regions(new Map([...this.byName].filter(([n]) => !drop.has(n))), this.order.filter((n) => !drop.has(n)));
  }

  withOnlyRegions(names: readonly string[]): Regions {
    const keep = new Set(names);
    return new Regions(new Map([...this.byName].filter(([n]) => keep.has(n))), this.order.filter((n) => keep.has(n)));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Region names in order. */
  names(): string[] {
    return [...this.order];
  }

  sectionsOf(name: string): readonly Section[] {
    return this.byName.get(name) ?? [];
  }

  /** Every section with the region it is rendered under, in order. */
  entries(): Array<{ region: string; section: Section }> {
    return this.order.flatMap((region) => this.sectionsOf(region).map((section) => ({ region, section })));
  }
}
