/**
 * The signed-in token: kept in sessionStorage only (gone when the tab closes; never in a URL, a cookie
 * or localStorage), so it leaves the browser only as the `Authorization` header of API calls.
 */
const KEY = 'switchyard.console.token';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null): void {
  try {
    if (token === null) sessionStorage.removeItem(KEY);
    else sessionStorage.setItem(KEY, token);
  } catch {
    // Storage refused (private mode quotas): the session lasts as long as the page.
  }
}
