/**
 * The gateway's lifecycle: start (the delivery engine resumes, interrupted erasures finish),
 * maintenance (retention), reload (a new configuration applied between two requests, or
 * refused by name) and close (everything stops before the stores it writes close).
 */
import type { GatewayParts } from "./build-gateway-context.ts";
import { describeConfigChanges } from "./config/config-changes.ts";
import type { Gateway, GatewayOptions } from "./gateway-options.ts";
import { settingsOf } from "./gateway-settings.ts";
import { applyRetention } from "./lifecycle/apply-retention.ts";
import { withTransform } from "./transform/transforming-sink.ts";

/** The lifecycle half of a `Gateway` over its wired parts. */
export function createGatewayLifecycle(
  parts: GatewayParts,
  options: GatewayOptions,
): Pick<Gateway, "start" | "resumeErasures" | "runMaintenance" | "reload" | "close"> {
  const { ctx, live, transforms, operational } = parts;
  const { store } = ctx;
  return {
    start: async () => {
      await ctx.delivery?.start();
      // In the background: an erasure interrupted by a stop is finished (and audited) now.
      void parts.resumeErasures();
    },
    resumeErasures: parts.resumeErasures,
    runMaintenance: async () => {
      const now = ctx.clock.now();
      const report = await applyRetention(store, ctx.retention, now);
      // Delivery records hold no event content (ids, states, attempt outcomes): they follow the
      // global retention (docs/data-lifecycle.md).
      await ctx.delivery?.purge(now - ctx.config.retentionDays * 86_400_000);
      return report.events;
    },
    async reload(next, createSinks) {
      const changes = describeConfigChanges(ctx.config, next);
      if (changes.fixed.length > 0) return { ok: false, changes };
      const touched = new Set([
        ...(changes.lists.destinations?.added ?? []),
        ...(changes.lists.destinations?.changed ?? []),
      ]);
      // The only wait: new transports are built before anything changes.
      const sinks = createSinks ? await createSinks(next.destinations.filter((d) => touched.has(d.id))) : [];
      const saved = options.delivery && sinks.length > 0 ? await options.delivery.outbox.listDestinationStates() : [];
      // From here on, one synchronous turn: no request sees half of the old and half of the new.
      const disposeTransforms = transforms.reconfigure(next.destinations);
      const settings = settingsOf(
        next,
        parts.settingsDeps,
        changes.settings.includes("ingress") ? undefined : ctx.verificationLimiter,
      );
      const enricher = parts.applySettings(settings, Boolean(changes.lists.upstreams));
      live.reconfigure({ config: next, enricher, transformEvent: parts.streamTransformOf(next.destinations) });
      const withSink = new Set(sinks.map((sink) => sink.destinationId));
      const applied = await ctx.delivery?.reload({
        destinations: next.destinations,
        routes: settings.routes,
        enricher,
        sinks: sinks.map((sink) => withTransform(sink, transforms)),
        // A changed destination without a sink now (e.g. it became a stream destination) leaves the engine.
        removed: [...(changes.lists.destinations?.removed ?? []), ...[...touched].filter((id) => !withSink.has(id))],
        saved,
      });
      if (applied) applied.retired.then(disposeTransforms, disposeTransforms);
      else disposeTransforms();
      return { ok: true, changes, kept: applied?.kept ?? {} };
    },
    close: async () => {
      // The engine stops (attempts finish or are aborted) before the stores it writes close.
      await ctx.delivery?.stop();
      transforms.close();
      await options.delivery?.outbox.close();
      // Dead letters collected for a batch are reported before the store closes.
      await operational?.stop();
      live.shutdown();
      await ctx.hub.close();
      ctx.writeHealth?.stop();
      await store.close();
      await ctx.tracing?.shutdown();
    },
  };
}
