/** The lab's own settings, one value per key (LabSetting), kept for the installation's life. */
import type { PrismaClient } from "./generated/client";

export class LabSettingRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** The stored value, or `make()`'s, stored now when there was none (e.g. the lab's id, made on first start). */
  async ensure(key: string, make: () => string): Promise<string> {
    const existing = await this.prisma.labSetting.findUnique({ where: { key } });
    if (existing) return existing.value;
    const value = make();
    await this.prisma.labSetting.create({ data: { key, value } });
    return value;
  }
}
