"use client";
/**
 * "Predict first": the step's question before its experiment runs. The
 * answer is committed once and then locked, so what the participant expected
 * can be set honestly against what the run measured.
 */
import { useId, useState } from "react";
import type { Prediction, PredictQuestion } from "../../server/core/protocol/notebook-model";
import { formatCommittedAt } from "./model/predictions";

import Markdown from "../shell/Markdown";

import "./PredictionPrompt.css";

interface Props {
  question: PredictQuestion;
  /** The committed answer to this question, or null. */
  prediction: Prediction | null;
  disabled: boolean;
  /** The experiment has already run here: an answer now is labelled as given afterwards. */
  ranAlready?: boolean;
  onCommit(choice: string): void;
}

export default function PredictionPrompt({ question, prediction, disabled, ranAlready = false, onCommit }: Props) {
  const name = useId();
  const [picked, setPicked] = useState<string | null>(null);
  // A prediction stored under another question id is not an answer to this one.
  if (prediction !== null && prediction.questionId === question.id) {
    return (
      <section className="prediction-prompt prediction-locked" data-testid="prediction-prompt" data-question-id={question.id} aria-label="Your prediction">
        <Markdown as="p" inline className="prediction-question" source={question.text} />
        <p className="prediction-committed" data-testid="prediction-committed">
          You predicted: <strong>{prediction.choice}</strong>{" "}
          <span className="prediction-time">
            (committed <time dateTime={prediction.committedAt}>{formatCommittedAt(prediction.committedAt)}</time>
            {prediction.afterRun ? ", after the experiment had run" : ""}; locked)
          </span>
        </p>
      </section>
    );
  }
  // The choices are filled in with the scenario's values, so a change of parameters can remove the one picked.
  const choice = picked !== null && question.choices.includes(picked) ? picked : null;
  return (
    <section className="prediction-prompt" data-testid="prediction-prompt" data-question-id={question.id} aria-label="Predict first">
      <fieldset className="prediction-fieldset" disabled={disabled}>
        <legend className="prediction-question">
          <span className="prediction-kicker">Predict first:</span> <Markdown inline source={question.text} />
        </legend>
        <div className="prediction-choices">
          {question.choices.map((option) => (
            <label className="prediction-choice" key={option}>
              <input
                type="radio"
                name={name}
                value={option}
                data-testid="prediction-choice"
                checked={choice === option}
                onChange={() => setPicked(option)}
              />
              <Markdown inline source={option} />
            </label>
          ))}
        </div>
        <div className="prediction-actions">
          <button
            type="button"
            className="button button-primary"
            data-testid="prediction-commit"
            disabled={disabled || choice === null}
            onClick={() => {
              if (choice !== null) onCommit(choice);
            }}
          >
            Commit prediction
          </button>
          <small className="prediction-note">
            Once committed, your prediction is kept and shown next to the measured verdict
            {ranAlready ? "; this experiment has already run here, so it will be marked as given afterwards" : ""}.
          </small>
        </div>
      </fieldset>
    </section>
  );
}
