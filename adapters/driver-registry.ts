/**
 * What every driver registry (adapters/<contract>/registry.ts) is: driver names mapped to a lazy
 * import of that driver's one typed factory, the way unstorage lists its `builtinDrivers`. A
 * driver's module, and the libraries it needs, load only when the configuration names it.
 */

/** Driver name -> loader of the driver's factory. */
export type DriverRegistry<Factory> = Readonly<Record<string, () => Promise<Factory>>>;

/** The factory registered as `name`; an unknown name is a configuration error that lists the known ones. */
export async function loadDriver<Factory>(
  registry: DriverRegistry<Factory>,
  contract: string,
  name: string,
): Promise<Factory> {
  const load = Object.hasOwn(registry, name) ? registry[name] : undefined;
  if (!load) {
    throw new Error(`no ${contract} driver "${name}"; registered: ${Object.keys(registry).join(", ")}`);
  }
  return load();
}
