/**
 * How a typed secret is kept — saved encrypted, or for this session only — and, when the system
 * offers no keychain, the question whether to save it anyway. One component for the connection
 * password and the probe/webhook secrets, so both ask the same thing the same way.
 */
export type Remember = 'save' | 'session';

export function KeepSecretChoice(props: {
  /** what is kept, as the legend says it ("the password", "it") */
  what: string;
  /** the radio group's name, unique on the page */
  name: string;
  remember: Remember;
  onRemember: (r: Remember) => void;
  /** the keychain is missing and the user asked to save: ask before saving in plain reach */
  confirmPlain: boolean;
  onSaveAnyway: () => void;
  onSessionOnly: () => void;
  /** the secret's noun in the warning ("password", "secret") */
  noun: string;
}) {
  return (
    <>
      <fieldset className="inline">
        <legend>Keep {props.what}</legend>
        <label>
          <input type="radio" name={props.name} checked={props.remember === 'save'} onChange={() => props.onRemember('save')} /> saved,
          encrypted
        </label>
        <label>
          <input type="radio" name={props.name} checked={props.remember === 'session'} onChange={() => props.onRemember('session')} /> this
          session only
        </label>
      </fieldset>
      {props.confirmPlain && (
        <div className="banner banner-warn" role="alertdialog" aria-label="No keychain on this system">
          <p>
            This system offers no keychain: a saved {props.noun} would be encrypted with a key that anyone who can read your files can use.
          </p>
          <button type="button" onClick={props.onSaveAnyway}>
            Save it anyway
          </button>{' '}
          <button type="button" className="primary" onClick={props.onSessionOnly}>
            Keep it for this session only
          </button>
        </div>
      )}
    </>
  );
}
