"use client";
/**
 * A new workshop: a title and the scenarios each participant gets a copy of,
 * then optionally its start and end (in this browser's zone), how many are in
 * at once, GPUs per participant and the pace; it clears once the server made it.
 */
import { useState, type FormEvent } from "react";
import { MAX_TITLE_CHARS } from "../../server/core/limits";
import type { ScenarioSummary } from "../../server/core/protocol/notebook-model";
import { MAX_WORKSHOP_CAPACITY } from "../../server/core/protocol/socket-api";
import { DEFAULT_WORKSHOP_FIELDS, newWorkshopOptions, newWorkshopProblem, type NewWorkshopFields } from "./model/workshops";
import WorkshopPlanFields from "./WorkshopPlanFields";

interface Props {
  scenarios: readonly ScenarioSummary[] | null;
  creating: boolean;
  onCreate(title: string, scenarioIds: string[], fields: NewWorkshopFields): Promise<boolean>;
}

export default function NewWorkshopForm({ scenarios, creating, onCreate }: Props) {
  const [title, setTitle] = useState("");
  const [picked, setPicked] = useState<readonly string[]>([]);
  const [fields, setFields] = useState<NewWorkshopFields>(DEFAULT_WORKSHOP_FIELDS);
  const options = newWorkshopOptions(fields);
  const problem = newWorkshopProblem(title, picked) ?? (options.ok ? null : options.error);

  const toggle = (id: string, on: boolean) => setPicked((current) => (on ? [...current.filter((x) => x !== id), id] : current.filter((x) => x !== id)));

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (creating || problem !== null) return;
    // In the catalog's order, whatever order they were ticked in.
    const order = (scenarios ?? []).map((s) => s.id);
    void onCreate(title, [...picked].sort((a, b) => order.indexOf(a) - order.indexOf(b)), fields).then((made) => {
      if (!made) return;
      setTitle("");
      setPicked([]);
      setFields(DEFAULT_WORKSHOP_FIELDS);
    });
  };

  return (
    <form className="workshop-new" data-testid="new-workshop-form" onSubmit={submit}>
      <h2>New workshop</h2>
      <input
        className="workshop-new-title"
        data-testid="new-workshop-title"
        aria-label="Workshop title"
        placeholder="Title, e.g. Tuesday lab: data parallelism"
        maxLength={MAX_TITLE_CHARS}
        value={title}
        onChange={(e) => setTitle(e.target.value)}
      />
      <fieldset className="workshop-new-scenarios">
        <legend>Scenarios each participant gets a copy of</legend>
        {scenarios === null && <span className="list-empty">Loading scenarios…</span>}
        {scenarios?.map((scenario) => (
          <label key={scenario.id} className="workshop-new-scenario">
            <input
              type="checkbox"
              data-testid="new-workshop-scenario"
              data-scenario-id={scenario.id}
              checked={picked.includes(scenario.id)}
              onChange={(e) => toggle(scenario.id, e.target.checked)}
            />
            {scenario.title}
          </label>
        ))}
      </fieldset>
      <WorkshopPlanFields fields={fields} maxCapacity={MAX_WORKSHOP_CAPACITY} onChange={setFields} />
      {problem !== null && title.trim() !== "" && picked.length > 0 && (
        <p className="workshop-new-problem" data-testid="new-workshop-problem" role="status">
          {problem}
        </p>
      )}
      <button type="submit" className="button button-primary" data-testid="new-workshop-submit" disabled={creating || problem !== null} title={problem ?? undefined}>
        {creating ? "Creating…" : "Create workshop"}
      </button>
    </form>
  );
}
