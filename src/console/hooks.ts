/**
 * Polling: `usePoll` loads now and again every REFRESH_MS (4 s, within the 5 s the console promises)
 * while the view is shown. A refused token ends the session (the app's `onSessionEnded`); other
 * errors are shown in the view and the next poll tries again.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { SessionEnded } from './api.js';

export const REFRESH_MS = 4_000;

export interface Poll<T> {
  data: T | undefined;
  error: string | undefined;
  updated: Date | undefined;
  reload(): void;
}

export function usePoll<T>(
  load: () => Promise<T>,
  onSessionEnded: (message: string) => void,
  everyMs = REFRESH_MS,
): Poll<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [updated, setUpdated] = useState<Date | undefined>(undefined);
  const loadRef = useRef(load);
  loadRef.current = load;
  const run = useCallback(async () => {
    try {
      const value = await loadRef.current();
      setData(value);
      setError(undefined);
      setUpdated(new Date());
    } catch (err) {
      if (err instanceof SessionEnded) onSessionEnded(err.message);
      else setError(err instanceof Error ? err.message : String(err));
    }
  }, [onSessionEnded]);
  useEffect(() => {
    void run();
    const timer = setInterval(() => void run(), everyMs);
    return () => clearInterval(timer);
  }, [run, everyMs]);
  return { data, error, updated, reload: () => void run() };
}
