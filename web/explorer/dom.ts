/**
 * DOM and number helpers shared by the views.
 *
 * Design note: every piece of text that comes from a file (names, values, metadata) reaches the
 * page through `textContent` or an attribute set as a property, never through `innerHTML`, so a
 * file cannot inject markup. {@link el} is the one way views build elements.
 */

/** Properties {@link el} can set. */
export interface ElementProps {
  id?: string;
  className?: string;
  text?: string;
  title?: string;
}

/** Creates an element with optional id, class, text and title, and appends `children`. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: ElementProps = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.id !== undefined) element.id = props.id;
  if (props.className !== undefined) element.className = props.className;
  if (props.text !== undefined) element.textContent = props.text;
  if (props.title !== undefined) element.title = props.title;
  element.append(...children);
  return element;
}

/** Looks up an element the page must have. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** A byte count for people: `512 B`, `12.3 KB`, `41.7 MB`, `1.20 GB` (binary multiples). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

/** A count with thousands separators: `6,001,215`. */
export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** `1 request`, `3 requests`. */
export function plural(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;
}

/** Milliseconds, rounded sensibly: `0.4 ms`, `12 ms`, `1,234 ms`. */
export function formatMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${formatCount(Math.round(ms))} ms`;
}

/** Cuts `text` to `max` characters, ending with an ellipsis when cut. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
