/**
 * The `transform` option of a destination (docs/transformations.md): a JavaScript module given
 * inline (`code`), read from a file next to the config (`file`, inlined by the Node loader) or a
 * built-in chat format (`builtin`), with its time and memory budget per call.
 */
import * as v from "valibot";
import { checkTransformModule } from "./module-source.ts";

/** The built-in formats (builtin-transforms.ts). */
export const BUILTIN_TRANSFORMS = ["slack", "teams", "discord"] as const;
export type BuiltinTransformName = (typeof BUILTIN_TRANSFORMS)[number];

/** Longest accepted module source, characters. */
const MAX_CODE_LENGTH = 256 * 1024;

export const TransformSchema = v.pipe(
  v.strictObject({
    /** The module's source: its default export is called as `transform(event, context)`. */
    code: v.optional(
      v.pipe(
        v.string(),
        v.maxLength(MAX_CODE_LENGTH, "a module of at most 256 KiB"),
        v.rawCheck(({ dataset, addIssue }) => {
          if (!dataset.typed) return;
          const problem = checkTransformModule(dataset.value);
          if (problem) addIssue({ message: `a JavaScript module with a default export (${problem})` });
        }),
      ),
    ),
    /** A module file, relative to the config file (read by the Node CLI into `code`). */
    file: v.optional(v.pipe(v.string(), v.minLength(1))),
    /** A built-in format: `slack`, `teams` or `discord`. */
    builtin: v.optional(v.picklist(BUILTIN_TRANSFORMS, "one of slack, teams, discord")),
    /** Time one call may run, ms. Default 50, at most 1000. */
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 50),
    /** Memory one transform may use, MiB. Default 16. */
    memoryLimitMb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(256)), 16),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const { code, file, builtin } = dataset.value;
    if ((code !== undefined || file !== undefined) === (builtin !== undefined)) {
      addIssue({ message: "exactly one of code, file or builtin" });
    } else if (file !== undefined && code === undefined) {
      addIssue({
        message: "a file the Node CLI reads (gateway serve --config <file>); elsewhere, put the module in code",
        path: [{ type: "object", origin: "value", input: dataset.value, key: "file", value: file }],
      });
    }
  }),
);

export type TransformConfig = v.InferOutput<typeof TransformSchema>;

/** Spread into a destination schema: its optional `transform`. */
export const TransformEntries = { transform: v.optional(TransformSchema) };
