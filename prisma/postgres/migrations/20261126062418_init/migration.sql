-- CreateTable
CREATE TABLE "User" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "emailVerified" BOOLEAN NOT NULL DEFAULT false,
    "image" TEXT,
    "role" TEXT NOT NULL DEFAULT 'member',
    "workshopId" TEXT,
    "removedAt" TIMESTAMP(3),
    "waitingSince" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Session" (
    "id" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "ipAddress" TEXT,
    "userAgent" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Session_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Account" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "providerId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "accessToken" TEXT,
    "refreshToken" TEXT,
    "idToken" TEXT,
    "accessTokenExpiresAt" TIMESTAMP(3),
    "refreshTokenExpiresAt" TIMESTAMP(3),
    "scope" TEXT,
    "password" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Account_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Verification" (
    "id" TEXT NOT NULL,
    "identifier" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Verification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Workshop" (
    "id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "facilitatorId" TEXT NOT NULL,
    "joinCode" TEXT NOT NULL,
    "scenarioIds" JSONB NOT NULL,
    "closedAt" TIMESTAMP(3),
    "startsAt" TIMESTAMP(3),
    "endsAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),
    "pace" TEXT NOT NULL DEFAULT 'self',
    "revealedSteps" INTEGER NOT NULL DEFAULT 1,
    "capacity" INTEGER NOT NULL DEFAULT 60,
    "hostId" TEXT,
    "gpusPerParticipant" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Workshop_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WorkshopBroadcast" (
    "id" TEXT NOT NULL,
    "workshopId" TEXT NOT NULL,
    "message" TEXT,
    "preset" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WorkshopBroadcast_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "NotebookShare" (
    "notebookId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "access" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NotebookShare_pkey" PRIMARY KEY ("notebookId","userId")
);

-- CreateTable
CREATE TABLE "Notebook" (
    "id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,
    "lastSeq" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deletedAt" TIMESTAMP(3),
    "kernelHostId" TEXT,
    "kernelGpus" INTEGER NOT NULL DEFAULT 0,
    "workshopId" TEXT,

    CONSTRAINT "Notebook_pkey" PRIMARY KEY ("id")
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
    "templateDetached" BOOLEAN NOT NULL DEFAULT false,
    "templateGuide" JSONB,
    "lastExecutionId" TEXT,
    "executionCount" INTEGER,
    "outputs" JSONB NOT NULL,
    "lastRun" JSONB,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Cell_pkey" PRIMARY KEY ("notebookId","id")
);

-- CreateTable
CREATE TABLE "KernelRun" (
    "id" TEXT NOT NULL,
    "notebookId" TEXT NOT NULL,
    "userId" TEXT,
    "host" TEXT NOT NULL,
    "deviceMode" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "exitReason" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" TIMESTAMP(3),
    "hostId" TEXT,
    "agentKernelId" TEXT,
    "agentSeq" INTEGER NOT NULL DEFAULT 0,
    "kernelInfo" JSONB,

    CONSTRAINT "KernelRun_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CellExecution" (
    "id" TEXT NOT NULL,
    "runId" TEXT NOT NULL,
    "cellId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "templateId" TEXT,
    "parameters" JSONB,
    "executionCount" INTEGER,
    "status" TEXT NOT NULL,
    "queuedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),
    "durationMs" DOUBLE PRECISION,
    "lastHeardAt" TIMESTAMP(3),
    "liveTail" JSONB,
    "devicePlans" JSONB,

    CONSTRAINT "CellExecution_pkey" PRIMARY KEY ("id")
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
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CellOutput_pkey" PRIMARY KEY ("notebookId","seq")
);

-- CreateTable
CREATE TABLE "MetricSeries" (
    "id" SERIAL NOT NULL,
    "runId" TEXT NOT NULL,
    "executionId" TEXT NOT NULL DEFAULT '',
    "tag" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "rank" INTEGER NOT NULL,

    CONSTRAINT "MetricSeries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MetricPoint" (
    "seriesId" INTEGER NOT NULL,
    "seq" INTEGER NOT NULL,
    "step" INTEGER NOT NULL,
    "value" DOUBLE PRECISION,

    CONSTRAINT "MetricPoint_pkey" PRIMARY KEY ("seriesId","seq")
);

-- CreateTable
CREATE TABLE "Prediction" (
    "notebookId" TEXT NOT NULL,
    "questionId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "choice" TEXT NOT NULL,
    "afterRun" BOOLEAN NOT NULL DEFAULT false,
    "committedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Prediction_pkey" PRIMARY KEY ("notebookId","questionId","userId")
);

-- CreateTable
CREATE TABLE "LabSetting" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "LabSetting_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "NotebookDriver" (
    "notebookId" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "leaseUntil" TIMESTAMP(3) NOT NULL,
    "since" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NotebookDriver_pkey" PRIMARY KEY ("notebookId")
);

-- CreateIndex
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");

-- CreateIndex
CREATE UNIQUE INDEX "Session_token_key" ON "Session"("token");

-- CreateIndex
CREATE INDEX "Session_userId_idx" ON "Session"("userId");

-- CreateIndex
CREATE INDEX "Account_userId_idx" ON "Account"("userId");

-- CreateIndex
CREATE INDEX "Verification_identifier_idx" ON "Verification"("identifier");

-- CreateIndex
CREATE UNIQUE INDEX "Workshop_joinCode_key" ON "Workshop"("joinCode");

-- CreateIndex
CREATE INDEX "WorkshopBroadcast_workshopId_createdAt_idx" ON "WorkshopBroadcast"("workshopId", "createdAt");

-- CreateIndex
CREATE INDEX "NotebookShare_userId_idx" ON "NotebookShare"("userId");

-- CreateIndex
CREATE INDEX "Notebook_ownerId_deletedAt_updatedAt_idx" ON "Notebook"("ownerId", "deletedAt", "updatedAt");

-- CreateIndex
CREATE INDEX "Notebook_workshopId_idx" ON "Notebook"("workshopId");

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
CREATE INDEX "MetricSeries_executionId_idx" ON "MetricSeries"("executionId");

-- CreateIndex
CREATE UNIQUE INDEX "MetricSeries_runId_executionId_tag_name_rank_key" ON "MetricSeries"("runId", "executionId", "tag", "name", "rank");

-- CreateIndex
CREATE INDEX "NotebookDriver_serverId_idx" ON "NotebookDriver"("serverId");

-- CreateIndex
CREATE INDEX "NotebookDriver_leaseUntil_idx" ON "NotebookDriver"("leaseUntil");

-- AddForeignKey
ALTER TABLE "User" ADD CONSTRAINT "User_workshopId_fkey" FOREIGN KEY ("workshopId") REFERENCES "Workshop"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Account" ADD CONSTRAINT "Account_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Workshop" ADD CONSTRAINT "Workshop_facilitatorId_fkey" FOREIGN KEY ("facilitatorId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WorkshopBroadcast" ADD CONSTRAINT "WorkshopBroadcast_workshopId_fkey" FOREIGN KEY ("workshopId") REFERENCES "Workshop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NotebookShare" ADD CONSTRAINT "NotebookShare_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NotebookShare" ADD CONSTRAINT "NotebookShare_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Notebook" ADD CONSTRAINT "Notebook_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Notebook" ADD CONSTRAINT "Notebook_workshopId_fkey" FOREIGN KEY ("workshopId") REFERENCES "Workshop"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Cell" ADD CONSTRAINT "Cell_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "KernelRun" ADD CONSTRAINT "KernelRun_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "KernelRun" ADD CONSTRAINT "KernelRun_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CellExecution" ADD CONSTRAINT "CellExecution_runId_fkey" FOREIGN KEY ("runId") REFERENCES "KernelRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CellOutput" ADD CONSTRAINT "CellOutput_runId_fkey" FOREIGN KEY ("runId") REFERENCES "KernelRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CellOutput" ADD CONSTRAINT "CellOutput_executionId_fkey" FOREIGN KEY ("executionId") REFERENCES "CellExecution"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MetricSeries" ADD CONSTRAINT "MetricSeries_runId_fkey" FOREIGN KEY ("runId") REFERENCES "KernelRun"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MetricPoint" ADD CONSTRAINT "MetricPoint_seriesId_fkey" FOREIGN KEY ("seriesId") REFERENCES "MetricSeries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Prediction" ADD CONSTRAINT "Prediction_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NotebookDriver" ADD CONSTRAINT "NotebookDriver_notebookId_fkey" FOREIGN KEY ("notebookId") REFERENCES "Notebook"("id") ON DELETE CASCADE ON UPDATE CASCADE;
