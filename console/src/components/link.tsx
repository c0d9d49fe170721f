/** An in-app link: a real `<a href>` (open in a new tab works) that navigates without a reload. */
import type { ComponentChildren } from "preact";
import { onLinkClick } from "../router.ts";

export function Link(props: { href: string; children: ComponentChildren; current?: boolean; class?: string }) {
  return (
    <a href={props.href} class={props.class} aria-current={props.current ? "page" : undefined} onClick={onLinkClick}>
      {props.children}
    </a>
  );
}
