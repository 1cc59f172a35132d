"use client";
/** One "predict first" question across the class: per choice, how many predicted it beside how many measured it. */
import type { QuestionTally } from "../../server/core/protocol/workshop-model";
import Markdown from "../shell/Markdown";
import { tallyCard } from "./model/workshop-console-words";

import "./QuestionTallyChart.css";

interface Props {
  tally: QuestionTally;
  scenarioTitle: string;
}

export default function QuestionTallyChart({ tally, scenarioTitle }: Props) {
  const card = tallyCard(tally);
  return (
    <figure className="tally" data-testid="tally" data-question-id={card.questionId} data-scenario-id={card.scenarioId}>
      <figcaption className="tally-caption">
        <span className="tally-scenario">{scenarioTitle}</span>
        <Markdown inline as="p" className="tally-question" source={card.text} />
      </figcaption>
      <div className="tally-legend">
        <span className="tally-key tally-key-predicted" /> predicted ({card.predictedTotal}) <span className="tally-key tally-key-measured" /> measured by
        their own run ({card.measuredTotal})
      </div>
      {card.bars.map((bar) => (
        <div key={bar.choice} className="tally-choice" data-testid="tally-choice" data-choice={bar.choice}>
          <Markdown inline className="tally-choice-text" source={bar.choice} />
          <div className="tally-bars">
            <div className="tally-bar-line">
              <span className="tally-bar tally-bar-predicted" style={{ width: `${bar.predictedWidth}%` }} />
              <span className="tally-count" data-testid="tally-predicted" data-choice={bar.choice} data-count={bar.predicted}>
                {bar.predicted}
              </span>
            </div>
            <div className="tally-bar-line">
              <span className="tally-bar tally-bar-measured" style={{ width: `${bar.measuredWidth}%` }} />
              <span className="tally-count" data-testid="tally-measured" data-choice={bar.choice} data-count={bar.measured}>
                {bar.measured}
              </span>
            </div>
          </div>
        </div>
      ))}
      <p className="tally-undecided" data-testid="tally-undecided" data-count={card.undecided}>
        undecided: {card.undecided}
      </p>
    </figure>
  );
}
