/**
 * The signed-in key: kept in `sessionStorage` only (gone when the tab closes, never sent
 * anywhere but the gateway's own origin in `Authorization`).
 */
const STORAGE_KEY = "gateway-console.key";

/** The key of this tab's session, if signed in. */
export function readKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

/** Remembers the key for this tab. */
export function saveKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
}

/** Forgets the key. */
export function clearKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
