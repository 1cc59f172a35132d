-- CreateTable
CREATE TABLE "NotebookDriver" (
    "notebookId" TEXT NOT NULL PRIMARY KEY,
    "serverId" TEXT NOT NULL,
    "leaseUntil" DATETIME NOT NULL,
    "since" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "NotebookDriver_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "NotebookDriver_serverId_idx" ON "NotebookDriver"("serverId");

-- CreateIndex
CREATE INDEX "NotebookDriver_leaseUntil_idx" ON "NotebookDriver"("leaseUntil");
