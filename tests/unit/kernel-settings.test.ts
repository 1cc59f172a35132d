/** The kernel settings from the environment: defaults, idle shutdown off at 0, and a clear refusal of bad values. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { kernelLimitsOf, readConfig } from "../../server/config";

/** An environment with only these variables set. */
const only = (vars: Record<string, string>): NodeJS.ProcessEnv => ({ NODE_ENV: "test", ...vars });

describe("kernel settings", () => {
  const warned = { idleWarningMs: 5 * 60_000, gpuBusyPercent: 5 };
  const cases: Array<[string, Record<string, string>, { maxKernels: number; idleShutdownMs: number | null; idleWarningMs: number; gpuBusyPercent: number }]> = [
    ["defaults", {}, { maxKernels: 16, idleShutdownMs: 60 * 60_000, ...warned }],
    ["a smaller cap and a shorter period", { MGPULAB_MAX_KERNELS: "4", MGPULAB_KERNEL_IDLE_MINUTES: "15" }, { maxKernels: 4, idleShutdownMs: 15 * 60_000, ...warned }],
    ["a fractional period", { MGPULAB_KERNEL_IDLE_MINUTES: "0.5" }, { maxKernels: 16, idleShutdownMs: 30_000, ...warned }],
    ["idle shutdown off", { MGPULAB_KERNEL_IDLE_MINUTES: "0" }, { maxKernels: 16, idleShutdownMs: null, ...warned }],
    ["a longer warning and a GPU threshold", { MGPULAB_KERNEL_IDLE_WARNING_MINUTES: "10", MGPULAB_GPU_BUSY_PERCENT: "20" }, { maxKernels: 16, idleShutdownMs: 60 * 60_000, idleWarningMs: 10 * 60_000, gpuBusyPercent: 20 }],
  ];
  for (const [name, env, limits] of cases) {
    it(name, () => assert.deepEqual(kernelLimitsOf(readConfig([], only(env))), limits));
  }

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
