-- AlterTable
ALTER TABLE "User" ADD COLUMN "waitingSince" DATETIME;

-- CreateTable
CREATE TABLE "WorkshopBroadcast" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "workshopId" TEXT NOT NULL,
    "message" TEXT,
    "preset" JSONB,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "WorkshopBroadcast_workshopId_fkey" FOREIGN KEY ("workshopId") REFERENCES "Workshop" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Workshop" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "title" TEXT NOT NULL,
    "facilitatorId" TEXT NOT NULL,
    "joinCode" TEXT NOT NULL,
    "scenarioIds" JSONB NOT NULL,
    "closedAt" DATETIME,
    "startsAt" DATETIME,
    "endsAt" DATETIME,
    "endedAt" DATETIME,
    "pace" TEXT NOT NULL DEFAULT 'self',
    "revealedSteps" INTEGER NOT NULL DEFAULT 1,
    "capacity" INTEGER NOT NULL DEFAULT 60,
    "hostId" TEXT,
    "gpusPerParticipant" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Workshop_facilitatorId_fkey" FOREIGN KEY ("facilitatorId") REFERENCES "User" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_Workshop" ("closedAt", "createdAt", "facilitatorId", "id", "joinCode", "scenarioIds", "title") SELECT "closedAt", "createdAt", "facilitatorId", "id", "joinCode", "scenarioIds", "title" FROM "Workshop";
DROP TABLE "Workshop";
ALTER TABLE "new_Workshop" RENAME TO "Workshop";
CREATE UNIQUE INDEX "Workshop_joinCode_key" ON "Workshop"("joinCode");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "WorkshopBroadcast_workshopId_createdAt_idx" ON "WorkshopBroadcast"("workshopId", "createdAt");
