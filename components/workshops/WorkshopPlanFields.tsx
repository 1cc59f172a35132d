"use client";
/** The new-workshop form's optional part: when it runs, how many are in at once, GPUs each, and the pace. */
import { WORKSHOP_PACES, type WorkshopPace } from "../../server/core/protocol/workshop-model";
import type { NewWorkshopFields } from "./model/workshops";

interface Props {
  fields: NewWorkshopFields;
  maxCapacity: number;
  onChange(fields: NewWorkshopFields): void;
}

const PACE_WORDS: Record<WorkshopPace, string> = {
  self: "Self-paced: every step open",
  led: "Led: steps open as you reveal them",
};

export default function WorkshopPlanFields({ fields, maxCapacity, onChange }: Props) {
  const set = (patch: Partial<NewWorkshopFields>) => onChange({ ...fields, ...patch });
  return (
    <fieldset className="workshop-plan">
      <legend>When, how many, on what (optional)</legend>
      <label className="workshop-plan-field">
        <span>Starts</span>
        <input type="datetime-local" data-testid="new-workshop-starts" value={fields.startsAt} onChange={(e) => set({ startsAt: e.target.value })} />
      </label>
      <label className="workshop-plan-field">
        <span>Ends</span>
        <input type="datetime-local" data-testid="new-workshop-ends" value={fields.endsAt} onChange={(e) => set({ endsAt: e.target.value })} />
      </label>
      <label className="workshop-plan-field">
        <span>Capacity</span>
        <input type="number" min={1} max={maxCapacity} step={1} data-testid="new-workshop-capacity" value={fields.capacity} onChange={(e) => set({ capacity: e.target.value })} />
      </label>
      <label className="workshop-plan-field">
        <span>GPUs per participant</span>
        <input
          type="number"
          min={0}
          max={64}
          step={1}
          data-testid="new-workshop-gpus"
          title="0: CPU emulation (no GPU per participant)"
          value={fields.gpusPerParticipant}
          onChange={(e) => set({ gpusPerParticipant: e.target.value })}
        />
      </label>
      <label className="workshop-plan-field">
        <span>Pace</span>
        <select data-testid="new-workshop-pace" value={fields.pace} onChange={(e) => set({ pace: WORKSHOP_PACES.find((pace) => pace === e.target.value) ?? "self" })}>
          {WORKSHOP_PACES.map((pace) => (
            <option key={pace} value={pace}>
              {PACE_WORDS[pace]}
            </option>
          ))}
        </select>
      </label>
      <small className="workshop-plan-note">Times are in this browser&apos;s zone. Without a start, the workshop starts now; without an end, it runs until you end it.</small>
    </fieldset>
  );
}
