/**
 * Every repository of the lab on one open database: what the rest of the
 * server is handed instead of the Prisma client (no module outside
 * server/persistence reaches the client; eslint.config.mjs keeps it so).
 */
import type { Database } from "./database";
import { AccessRepository } from "./access-repository";
import { AccountRepository } from "./account-repository";
import { DriverLeases, type DriverLeaseOptions } from "./driver-leases";
import { LabSettingRepository } from "./lab-settings";
import { MetricRepository } from "./metric-repository";
import { NotebookRepository } from "./notebook-repository";
import { PredictionRepository } from "./prediction-repository";
import { RunRepository } from "./run-repository";
import { ShareRepository } from "./share-repository";
import { UserRepository } from "./user-repository";
import { VerificationRepository } from "./verification-repository";
import { WorkshopRepository } from "./workshop-repository";
import { WorkshopRosterRepository } from "./workshop-roster-repository";

export interface LabRepositories {
  notebooks: NotebookRepository;
  runs: RunRepository;
  metrics: MetricRepository;
  predictions: PredictionRepository;
  users: UserRepository;
  accounts: AccountRepository;
  verifications: VerificationRepository;
  access: AccessRepository;
  shares: ShareRepository;
  workshops: WorkshopRepository;
  roster: WorkshopRosterRepository;
  settings: LabSettingRepository;
  /** This server's driver leases (several lab servers on one database). */
  driverLeases(options: DriverLeaseOptions): DriverLeases;
}

export function repositoriesOf(db: Pick<Database, "prisma">): LabRepositories {
  const { prisma } = db;
  return {
    notebooks: new NotebookRepository(prisma),
    runs: new RunRepository(prisma),
    metrics: new MetricRepository(prisma),
    predictions: new PredictionRepository(prisma),
    users: new UserRepository(prisma),
    accounts: new AccountRepository(prisma),
    verifications: new VerificationRepository(prisma),
    access: new AccessRepository(prisma),
    shares: new ShareRepository(prisma),
    workshops: new WorkshopRepository(prisma),
    roster: new WorkshopRosterRepository(prisma),
    settings: new LabSettingRepository(prisma),
    driverLeases: (options) => new DriverLeases(prisma, options),
  };
}
