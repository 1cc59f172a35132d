"use client";
/**
 * The form above the code of an attached templated cell (as Colab forms and
 * Livebook smart cells do): one typed field per parameter the code uses.
 * Numbers apply on Enter or blur, checkboxes and selects on change; text the
 * catalog would refuse is flagged inline and never sent. The server checks
 * again (and across parameters); its refusal arrives as `serverError`.
 */
import { useId, useState } from "react";
import type { CellTemplate, ParameterField, ParameterValue } from "../../server/core/protocol/notebook-model";
import { changedValues, currentValue, fieldText, numberInputAttributes, parseFieldText } from "./model/parameter-form";

import Markdown from "../shell/Markdown";

import "./ParameterForm.css";

interface Props {
  template: CellTemplate;
  disabled: boolean;
  /** The server's refusal of the last change (e.g. a limit across parameters), or null. */
  serverError: string | null;
  onApply(values: Record<string, ParameterValue>): void;
  /** Null: no Detach button (a workshop participant works with the form, not the code). */
  onDetach: (() => void) | null;
}

export default function ParameterForm({ template, disabled, serverError, onApply, onDetach }: Props) {
  const apply = (name: string, value: ParameterValue) => {
    const changed = changedValues(template, { [name]: value });
    if (Object.keys(changed).length > 0) onApply(changed);
  };
  return (
    <section className="parameter-form" data-testid="parameter-form" data-template-id={template.id} aria-label={`Parameters of ${template.id}`}>
      <div className="parameter-form-head">
        <p className="parameter-caption">
          The code below is rendered from template <code>{template.id}</code>; a change applies to every attached cell of this scenario.
        </p>
        {onDetach !== null && (
          <button
            type="button"
            className="button"
            data-testid="template-detach"
            title="Detach: edit the code freely; the form stops applying"
            disabled={disabled}
            onClick={onDetach}
          >
            Detach
          </button>
        )}
      </div>
      {template.fields.length > 0 && (
        <div className="parameter-fields">
          {template.fields.map((field) => (
            <FieldRow key={field.name} field={field} value={currentValue(template, field)} disabled={disabled} onApply={apply} />
          ))}
        </div>
      )}
      {serverError !== null && (
        <p className="parameter-error parameter-error-server" data-testid="parameter-error" data-kind="server" role="alert">
          {serverError}
        </p>
      )}
    </section>
  );
}

interface FieldProps {
  field: ParameterField;
  value: ParameterValue;
  disabled: boolean;
  onApply(name: string, value: ParameterValue): void;
}

/**
 * One labelled field: its control, the help line, and the message when what
 * was typed is refused. A number field keeps the typed text as a draft until
 * it is applied, and the message until the text is fixed or the value changes.
 */
function FieldRow({ field, value, disabled, onApply }: FieldProps) {
  const id = useId();
  const [draft, setDraft] = useState<Draft>({ text: fieldText(value), error: null });
  const [shown, setShown] = useState(value);
  // The scenario's value changed (applied here, from another cell or another tab): show it instead of the stale draft.
  if (shown !== value) {
    setShown(value);
    setDraft({ text: fieldText(value), error: null });
  }
  const commit = () => {
    const parsed = parseFieldText(field, draft.text);
    if (!parsed.ok) {
      setDraft({ text: draft.text, error: parsed.message });
      return;
    }
    setDraft({ text: draft.text, error: null });
    onApply(field.name, parsed.value);
  };
  const helpId = `${id}-help`;
  const errorId = `${id}-error`;
  const common = {
    id,
    "data-testid": "parameter-input",
    "aria-describedby": draft.error === null ? helpId : `${helpId} ${errorId}`,
    "aria-invalid": draft.error !== null,
    disabled,
  };
  const control =
    field.type === "bool" ? (
      <input {...common} type="checkbox" checked={value === true} onChange={(e) => onApply(field.name, e.target.checked)} />
    ) : field.type === "choice" ? (
      <select {...common} value={fieldText(value)} onChange={(e) => onApply(field.name, e.target.value)}>
        {choicesWith(field.choices ?? [], fieldText(value)).map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
    ) : (
      <input
        {...common}
        {...numberInputAttributes(field)}
        type="number"
        inputMode={field.type === "int" ? "numeric" : "decimal"}
        value={draft.text}
        // A number input reports "" for text it cannot read ("1; import os"): parsing "" then says what is allowed.
        onChange={(e) => setDraft({ text: e.target.value, error: draft.error })}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            commit();
          } else if (e.key === "Escape") {
            setDraft({ text: fieldText(value), error: null });
          }
        }}
      />
    );
  return (
    <div className={`parameter-field parameter-field-${field.type}`} data-testid="parameter-field" data-name={field.name} data-type={field.type}>
      <label className="parameter-label" htmlFor={id}>
        {field.name}
      </label>
      {control}
      <Markdown as="small" inline className="parameter-help" id={helpId} source={field.help} />
      {draft.error !== null && (
        <span className="parameter-error" id={errorId} data-testid="parameter-error" data-kind="field" role="alert">
          {draft.error}
        </span>
      )}
    </div>
  );
}

interface Draft {
  text: string;
  error: string | null;
}

// A value the server holds but the choices no longer list must still be shown as it is, not as the first choice.
function choicesWith(choices: string[], value: string): string[] {
  return choices.includes(value) ? choices : [value, ...choices];
}
