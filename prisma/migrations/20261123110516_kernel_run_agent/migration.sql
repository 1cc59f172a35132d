-- CreateTable
CREATE TABLE "LabSetting" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "value" TEXT NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_KernelRun" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "notebookId" TEXT NOT NULL,
    "userId" TEXT,
    "host" TEXT NOT NULL,
    "deviceMode" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "exitReason" TEXT,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" DATETIME,
    "hostId" TEXT,
    "agentKernelId" TEXT,
    "agentSeq" INTEGER NOT NULL DEFAULT 0,
    "kernelInfo" JSONB,
    CONSTRAINT "KernelRun_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "KernelRun_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_KernelRun" ("deviceMode", "endedAt", "exitReason", "host", "id", "notebookId", "startedAt", "status", "userId") SELECT "deviceMode", "endedAt", "exitReason", "host", "id", "notebookId", "startedAt", "status", "userId" FROM "KernelRun";
DROP TABLE "KernelRun";
ALTER TABLE "new_KernelRun" RENAME TO "KernelRun";
CREATE INDEX "KernelRun_notebookId_startedAt_idx" ON "KernelRun"("notebookId", "startedAt");
CREATE INDEX "KernelRun_status_idx" ON "KernelRun"("status");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
