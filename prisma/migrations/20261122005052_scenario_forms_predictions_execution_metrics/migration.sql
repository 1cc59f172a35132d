-- AlterTable
ALTER TABLE "CellExecution" ADD COLUMN "parameters" JSONB;
ALTER TABLE "CellExecution" ADD COLUMN "templateId" TEXT;

-- CreateTable
CREATE TABLE "Prediction" (
    "notebookId" TEXT NOT NULL,
    "questionId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "choice" TEXT NOT NULL,
    "committedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("notebookId", "questionId", "userId"),
    CONSTRAINT "Prediction_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Cell" (
    "notebookId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "position" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "templateId" TEXT,
    "parameters" JSONB,
    "templateDetached" BOOLEAN NOT NULL DEFAULT false,
    "templateGuide" JSONB,
    "lastExecutionId" TEXT,
    "executionCount" INTEGER,
    "outputs" JSONB NOT NULL,
    "lastRun" JSONB,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("notebookId", "id"),
    CONSTRAINT "Cell_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Cell" ("executionCount", "id", "kind", "lastRun", "notebookId", "outputs", "parameters", "position", "source", "templateId", "updatedAt") SELECT "executionCount", "id", "kind", "lastRun", "notebookId", "outputs", "parameters", "position", "source", "templateId", "updatedAt" FROM "Cell";
DROP TABLE "Cell";
ALTER TABLE "new_Cell" RENAME TO "Cell";
CREATE INDEX "Cell_notebookId_position_idx" ON "Cell"("notebookId", "position");
CREATE TABLE "new_MetricSeries" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "runId" TEXT NOT NULL,
    "executionId" TEXT NOT NULL DEFAULT '',
    "tag" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "rank" INTEGER NOT NULL,
    CONSTRAINT "MetricSeries_runId_fkey" FOREIGN KEY ("runId") REFERENCES "KernelRun" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_MetricSeries" ("id", "name", "rank", "runId", "tag") SELECT "id", "name", "rank", "runId", "tag" FROM "MetricSeries";
DROP TABLE "MetricSeries";
ALTER TABLE "new_MetricSeries" RENAME TO "MetricSeries";
CREATE INDEX "MetricSeries_executionId_idx" ON "MetricSeries"("executionId");
CREATE UNIQUE INDEX "MetricSeries_runId_executionId_tag_name_rank_key" ON "MetricSeries"("runId", "executionId", "tag", "name", "rank");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
