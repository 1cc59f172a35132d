-- AlterTable
ALTER TABLE "Notebook" ADD COLUMN     "lastCommitId" TEXT;
