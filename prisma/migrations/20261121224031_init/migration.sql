-- CreateTable
CREATE TABLE "User" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "email" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Notebook" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "title" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,
    "lastSeq" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deletedAt" DATETIME,
    CONSTRAINT "Notebook_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Cell" (
    "notebookId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "position" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "templateId" TEXT,
    "parameters" JSONB,
    "executionCount" INTEGER,
    "outputs" JSONB NOT NULL,
    "lastRun" JSONB,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("notebookId", "id"),
    CONSTRAINT "Cell_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "KernelRun" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "notebookId" TEXT NOT NULL,
    "userId" TEXT,
    "host" TEXT NOT NULL,
    "deviceMode" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "exitReason" TEXT,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" DATETIME,
    CONSTRAINT "KernelRun_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "KernelRun_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "CellExecution" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runId" TEXT NOT NULL,
    "cellId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "executionCount" INTEGER,
    "status" TEXT NOT NULL,
    "queuedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" DATETIME,
    "endedAt" DATETIME,
    "durationMs" REAL,
    CONSTRAINT "CellExecution_runId_fkey" FOREIGN KEY ("runId") REFERENCES "KernelRun" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "CellOutput" (
    "notebookId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "runId" TEXT NOT NULL,
    "executionId" TEXT NOT NULL,
    "cellId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("notebookId", "seq"),
    CONSTRAINT "CellOutput_runId_fkey" FOREIGN KEY ("runId") REFERENCES "KernelRun" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "CellOutput_executionId_fkey" FOREIGN KEY ("executionId") REFERENCES "CellExecution" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "MetricSeries" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "runId" TEXT NOT NULL,
    "tag" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "rank" INTEGER NOT NULL,
    CONSTRAINT "MetricSeries_runId_fkey" FOREIGN KEY ("runId") REFERENCES "KernelRun" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "MetricPoint" (
    "seriesId" INTEGER NOT NULL,
    "seq" INTEGER NOT NULL,
    "step" INTEGER NOT NULL,
    "value" REAL,

    PRIMARY KEY ("seriesId", "seq"),
    CONSTRAINT "MetricPoint_seriesId_fkey" FOREIGN KEY ("seriesId") REFERENCES "MetricSeries" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");

-- CreateIndex
CREATE INDEX "Notebook_ownerId_deletedAt_updatedAt_idx" ON "Notebook"("ownerId", "deletedAt", "updatedAt");

-- CreateIndex
CREATE INDEX "Cell_notebookId_position_idx" ON "Cell"("notebookId", "position");

-- CreateIndex
CREATE INDEX "KernelRun_notebookId_startedAt_idx" ON "KernelRun"("notebookId", "startedAt");

-- CreateIndex
CREATE INDEX "KernelRun_status_idx" ON "KernelRun"("status");

-- CreateIndex
CREATE INDEX "CellExecution_runId_queuedAt_idx" ON "CellExecution"("runId", "queuedAt");

-- CreateIndex
CREATE INDEX "CellOutput_runId_seq_idx" ON "CellOutput"("runId", "seq");

-- CreateIndex
CREATE INDEX "CellOutput_executionId_seq_idx" ON "CellOutput"("executionId", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "MetricSeries_runId_tag_name_rank_key" ON "MetricSeries"("runId", "tag", "name", "rank");
