/**
 * Write actions ask first: the button opens a confirmation naming what will change, focused on
 * "Confirm"; Escape or "Cancel" closes it. The result (or the API's refusal, e.g. a read-only token's
 * 403) is announced in a live region.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, SessionEnded } from './api.js';

export interface ActionProps {
  label: string;
  /** What the confirmation asks, e.g. "Disable origin o1 of pool main?" */
  question: string;
  run: () => Promise<string>;
  onSessionEnded: (message: string) => void;
  disabled?: boolean;
}

export function ConfirmAction({ label, question, run, onSessionEnded, disabled }: ActionProps) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | undefined>(undefined);
  const confirmRef = useRef<HTMLButtonElement>(null);
  // A layout effect runs in the same task as the render that adds the button, so the confirmation is never
  // on screen without focus (a keypress in between would go elsewhere).
  useLayoutEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  const confirm = async () => {
    setBusy(true);
    try {
      setOutcome({ ok: true, text: await run() });
    } catch (err) {
      if (err instanceof SessionEnded) return onSessionEnded(err.message);
      const text =
        err instanceof ApiError && err.status === 403 ? `Refused: ${err.message}` : String((err as Error).message);
      setOutcome({ ok: false, text });
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return (
    <span class="action">
      {asking ? (
        <fieldset
          class="confirm"
          onKeyDown={(e) => {
            if (e.key === 'Escape') setAsking(false);
          }}
        >
          <legend>{question}</legend>
          <button type="button" ref={confirmRef} class="danger" disabled={busy} onClick={() => void confirm()}>
            Confirm
          </button>
          <button type="button" onClick={() => setAsking(false)}>
            Cancel
          </button>
        </fieldset>
      ) : (
        <button type="button" disabled={disabled} onClick={() => setAsking(true)}>
          {label}
        </button>
      )}
      <span role="status" class={outcome?.ok === false ? 'error' : 'ok'}>
        {outcome?.text ?? ''}
      </span>
    </span>
  );
}
