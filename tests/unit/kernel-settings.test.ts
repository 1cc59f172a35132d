/** The kernel settings from the environment: defaults, idle shutdown off at 0, and a clear refusal of bad values. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { kernelLimitsOf, readConfig } from "../../server/config";
import { kernelCapacity, KERNEL_BYTES, RESERVED_BYTES, type MachineFacts } from "../../server/kernel-capacity";

const GiB = 2 ** 30;
/** A machine with 24 GiB, 20 of them available at start, and 8 cores: it holds 158 kernels by memory, 256 by cores. */
const MACHINE: MachineFacts = { totalBytes: 24 * GiB, availableBytes: 20 * GiB, cores: 8 };

/** An environment with only these variables set. */
const only = (vars: Record<string, string>): NodeJS.ProcessEnv => ({ NODE_ENV: "test", ...vars });

describe("kernel settings", () => {
  const warned = { idleWarningMs: 5 * 60_000, gpuBusyPercent: 5 };
  const sized = Math.floor((20 * GiB - RESERVED_BYTES) / KERNEL_BYTES);
  const cases: Array<[string, Record<string, string>, { maxKernels: number; idleShutdownMs: number | null; idleWarningMs: number; gpuBusyPercent: number }]> = [
    ["defaults: the cap sized from the machine", {}, { maxKernels: sized, idleShutdownMs: 60 * 60_000, ...warned }],
    ["a smaller cap and a shorter period", { MGPULAB_MAX_KERNELS: "4", MGPULAB_KERNEL_IDLE_MINUTES: "15" }, { maxKernels: 4, idleShutdownMs: 15 * 60_000, ...warned }],
    ["a fractional period", { MGPULAB_KERNEL_IDLE_MINUTES: "0.5" }, { maxKernels: sized, idleShutdownMs: 30_000, ...warned }],
    ["idle shutdown off", { MGPULAB_KERNEL_IDLE_MINUTES: "0" }, { maxKernels: sized, idleShutdownMs: null, ...warned }],
    ["a longer warning and a GPU threshold", { MGPULAB_KERNEL_IDLE_WARNING_MINUTES: "10", MGPULAB_GPU_BUSY_PERCENT: "20" }, { maxKernels: sized, idleShutdownMs: 60 * 60_000, idleWarningMs: 10 * 60_000, gpuBusyPercent: 20 }],
  ];
  for (const [name, env, limits] of cases) {
    it(name, () => {
      const { capacity, ...rest } = kernelLimitsOf(readConfig([], only(env)), MACHINE);
      assert.deepEqual(rest, limits);
      assert.equal(capacity?.fromSetting, env.MGPULAB_MAX_KERNELS !== undefined);
    });
  }

  it("the cap holds a class on this machine's memory and cores, whichever is smaller, and says why", () => {
    assert.ok(sized >= 60, "a 20 GiB machine holds a class of 60 kernels with torch");
    const twoCores = kernelCapacity({ ...MACHINE, cores: 2 }, undefined);
    assert.equal(twoCores.max, 64);
    assert.match(twoCores.why, /sized from this machine \(20\.0 GiB of memory available at start, 2 cores; limited by cores/);
    const small = kernelCapacity({ totalBytes: 4 * GiB, availableBytes: 3 * GiB, cores: 8 }, undefined);
    assert.equal(small.max, Math.floor((3 * GiB - RESERVED_BYTES) / KERNEL_BYTES));
    assert.match(small.why, /limited by memory/);
    // A machine too small still gets a few, and the setting always wins (and is named as the reason).
    assert.equal(kernelCapacity({ totalBytes: GiB, availableBytes: GiB, cores: 1 }, undefined).max, 4);
    assert.match(kernelCapacity(MACHINE, 7).why, /^7 kernels at once, set by MGPULAB_MAX_KERNELS/);
  });

  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ MGPULAB_MAX_KERNELS: "0" }, /bad server settings: maxKernels: /],
    [{ MGPULAB_MAX_KERNELS: "2.5" }, /maxKernels: /],
    [{ MGPULAB_MAX_KERNELS: "many" }, /maxKernels: /],
    [{ MGPULAB_KERNEL_IDLE_MINUTES: "-1" }, /kernelIdleMinutes: /],
    [{ MGPULAB_KERNEL_IDLE_MINUTES: "soon" }, /kernelIdleMinutes: /],
    [{ MGPULAB_GPU_BUSY_PERCENT: "120" }, /gpuBusyPercent: /],
    [{ MGPULAB_KERNEL_LEASE_SECONDS: "0" }, /kernelLeaseSeconds: /],
  ];
  for (const [env, message] of bad) {
    it(`refuses ${JSON.stringify(env)}`, () => assert.throws(() => readConfig([], only(env)), message));
  }
});

describe("several lab servers: settings", () => {
  it("alone by default; MGPULAB_REDIS_URL makes it one of several, with a 15 s driver lease unless set", () => {
    assert.equal(readConfig([], only({})).redisUrl, undefined);
    const several = readConfig([], only({ MGPULAB_REDIS_URL: "redis://:secret@10.0.0.5:6379/2" }));
    assert.equal(several.redisUrl, "redis://:secret@10.0.0.5:6379/2");
    assert.equal(several.driverLeaseSeconds, 15);
    assert.equal(readConfig([], only({ MGPULAB_REDIS_URL: "rediss://cache.example.com", MGPULAB_DRIVER_LEASE_SECONDS: "4" })).driverLeaseSeconds, 4);
  });

  it("refuses a Redis URL of another scheme and a lease out of range, saying which", () => {
    assert.throws(() => readConfig([], only({ MGPULAB_REDIS_URL: "http://redis:6379" })), /redisUrl: a Redis URL starts with redis:\/\//);
    assert.throws(() => readConfig([], only({ MGPULAB_REDIS_URL: "redis://r", MGPULAB_DRIVER_LEASE_SECONDS: "0" })), /driverLeaseSeconds/);
  });
});
