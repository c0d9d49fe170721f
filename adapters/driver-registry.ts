/**
 * What every driver registry (adapters/<contract>/registry.ts) is: driver names mapped to a lazy
 * import of that driver's one typed factory, the way unstorage lists its `builtinDrivers`. A
 * driver's module, and the libraries it needs, load only when the configuration names it.
 *
 * A registry may also keep aliases: earlier names of a driver, so configurations written for them
 * keep working. An alias is not a driver of its own (it has no conformance run; the registered
 * name it points to does, test/architecture/driver-registries.test.ts).
 */

/** Driver name -> loader of the driver's factory. */
export type DriverRegistry<Factory> = Readonly<Record<string, () => Promise<Factory>>>;

/** Alias -> the registered name it opens. */
export type DriverAliases = Readonly<Record<string, string>>;

/** The registered name `name` stands for: itself, or the driver it is an alias of. */
export function resolveDriverName(aliases: DriverAliases, name: string): string {
  return (Object.hasOwn(aliases, name) ? aliases[name] : undefined) ?? name;
}

/**
 * The factory registered as `name` (or as the driver `name` is an alias of); an unknown name is a
 * configuration error that lists the known ones.
 */
export async function loadDriver<Factory>(
  registry: DriverRegistry<Factory>,
  contract: string,
  name: string,
  aliases: DriverAliases = {},
): Promise<Factory> {
  const resolved = resolveDriverName(aliases, name);
  const load = Object.hasOwn(registry, resolved) ? registry[resolved] : undefined;
  if (!load) {
    const known = [...Object.keys(registry), ...Object.keys(aliases).map((alias) => `${alias} (alias)`)];
    throw new Error(`no ${contract} driver "${name}"; registered: ${known.join(", ")}`);
  }
  return load();
}
