-- AlterTable
ALTER TABLE "CellExecution" ADD COLUMN "lastHeardAt" DATETIME;
ALTER TABLE "CellExecution" ADD COLUMN "liveTail" JSONB;
