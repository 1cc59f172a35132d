-- AlterTable
ALTER TABLE "CellExecution" ADD COLUMN "devicePlans" JSONB;
