/**
 * The built-in transforms `slack`, `teams` and `discord`: ordinary transform modules, run in the
 * sandbox like any other, generated from the chat messages each service declares for its event
 * types (src/services/<name>/*-chat-messages.ts). A type no service describes gets a generic message.
 */
import type { ServiceChatMessage, ServiceRegistry } from "../services/service-contract.ts";
import type { BuiltinTransformName } from "./transform-schema.ts";

/** Slack Block Kit (incoming webhooks), Teams Adaptive Card (workflows), Discord embed (webhooks). */
const FORMATTERS: Record<BuiltinTransformName, string> = {
  slack: `
const escape = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const format = (event, title, text, facts) => ({
  text: title,
  blocks: [
    { type: "header", text: { type: "plain_text", text: title.slice(0, 150) } },
    { type: "section", text: { type: "mrkdwn", text: escape(text) } },
    ...(facts.length > 0
      ? [{ type: "section", fields: facts.slice(0, 10).map(([label, value]) => ({ type: "mrkdwn", text: "*" + escape(label) + "*\\n" + escape(value) })) }]
      : []),
    { type: "context", elements: [{ type: "mrkdwn", text: escape(event.type + " · " + event.id) }] },
  ],
});`,
  teams: `
const format = (event, title, text, facts) => ({
  type: "message",
  attachments: [
    {
      contentType: "application/vnd.microsoft.card.adaptive",
      content: {
        type: "AdaptiveCard",
        $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
        version: "1.4",
        body: [
          { type: "TextBlock", text: title, weight: "Bolder", size: "Medium", wrap: true },
          { type: "TextBlock", text, wrap: true },
          { type: "FactSet", facts: facts.map(([label, value]) => ({ title: label, value })) },
          { type: "TextBlock", text: event.type + " · " + event.id, isSubtle: true, size: "Small", wrap: true },
        ],
      },
    },
  ],
});`,
  discord: `
const format = (event, title, text, facts) => ({
  content: title.slice(0, 2000),
  embeds: [
    {
      title: title.slice(0, 256),
      description: text.slice(0, 4096),
      fields: facts.slice(0, 25).map(([label, value]) => ({ name: label.slice(0, 256), value: value.slice(0, 1024), inline: true })),
      footer: { text: event.type + " · " + event.id },
      ...(event.time ? { timestamp: event.time } : {}),
    },
  ],
});`,
};

const RENDERER = `
const read = (value, path) => {
  let current = [value];
  for (const key of path.split(".")) {
    const next = [];
    for (const item of current) {
      if (item === null || typeof item !== "object") continue;
      if (key === "*") { if (Array.isArray(item)) next.push(...item); }
      else if (Object.prototype.hasOwnProperty.call(item, key)) next.push(item[key]);
    }
    current = next;
  }
  const found = current.filter((item) => item !== undefined && item !== null && item !== "");
  return found.map((item) => (typeof item === "object" ? JSON.stringify(item) : String(item))).join(", ");
};
const render = (template, event) =>
  template.replace(/\\{\\{([^}]*)\\}\\}/g, (_, expression) => {
    for (const alternative of expression.split("|").map((part) => part.trim())) {
      if (alternative.startsWith('"')) return alternative.slice(1, -1);
      const value = read(event, alternative);
      if (value !== "") return value;
    }
    return "";
  });
const GENERIC = { title: "{{type}}: {{subject | id}}", text: "An event arrived from {{source}}.", facts: [] };
export default function transform(event) {
  const message = MESSAGES[event.type] ?? GENERIC;
  const facts = message.facts
    .map(([label, template]) => [label, render(template, event)])
    .filter(([, value]) => value !== "");
  return format(event, render(message.title, event), render(message.text, event), facts);
}`;

/** The module source of built-in `name` for the event types of `services`. */
export function builtinTransformSource(name: BuiltinTransformName, services: ServiceRegistry): string {
  const messages: Record<string, ServiceChatMessage> = {};
  for (const service of services.values()) Object.assign(messages, service.chatMessages ?? {});
  return `// Built-in transform "${name}" (src/transform/builtin-transforms.ts).
const MESSAGES = ${JSON.stringify(messages)};
${FORMATTERS[name]}
${RENDERER}
`;
}
