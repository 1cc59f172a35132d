/**
 * Every lab op's handler: the feature modules' tables joined into the one
 * table the socket edge dispatches through. The type makes it exhaustive: a
 * new op without a handler in some feature module does not compile.
 */
import { accountHandlers } from "../auth/account-handlers";
import { shareHandlers } from "../auth/share-handlers";
import { catalogHandlers } from "../notebook/catalog-handlers";
import { kernelHandlers } from "../notebook/kernel-handlers";
import { scenarioHandlers } from "../scenarios/scenario-handlers";
import { hostHandlers } from "../hosts/host-handlers";
import { workshopHandlers } from "../workshops/workshop-handlers";
import type { LabHandlers, LabServices } from "./lab-handler";

export function labHandlers(services: LabServices): LabHandlers {
  return {
    ...accountHandlers(services),
    ...shareHandlers(services),
    ...catalogHandlers(services),
    ...scenarioHandlers(services),
    ...kernelHandlers(services),
    ...hostHandlers(services),
    ...workshopHandlers(services),
  };
}
