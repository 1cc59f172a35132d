/** The persistence API: open the database, then build repositories on its client. */
export { checkDrift, closeDatabase, databaseProviderOf, getDatabase, openDatabase, resolveDatabaseFile, type Database, type DatabaseOptions, type DatabaseProvider, type PrismaClient } from "./database";
export { AlreadyExistsError, InvalidDataError, isDatabaseUnreachable, isPersistenceError, NotDrivingError, NotFoundError, PersistenceError, VersionConflictError, type PersistenceErrorCode } from "./errors";
export { MetricRepository, type SeriesFilter, type SeriesInfo } from "./metric-repository";
export { MigrationError } from "./migrations";
export { NotebookRepository, toNotebookDocument, type CreateNotebookInput, type ListOptions, type VersionResult } from "./notebook-repository";
export { foldOutputs, newRunId, RunRepository, SERVER_RESTARTED, type FinishExecutionInput, type ReplayScope, type StartRunInput } from "./run-repository";
export { MAX_PREDICTION_TEXT, PredictionAlreadyCommittedError, PredictionRepository, type PredictionInput } from "./prediction-repository";
export { LOCAL_USER, UserRepository, type UserSummary } from "./user-repository";
export type * from "./types";
export { repositoriesOf, type LabRepositories } from "./repositories";
