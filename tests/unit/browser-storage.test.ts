/**
 * browserStorage: the page's localStorage, null where a browser refuses it
 * (reading it throws a DOMException) or there is no window (a server render);
 * any other failure is a bug and is not hidden.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { browserStorage } from "../../components/shell/model/browser-storage";

/** A stand-in window whose localStorage getter does what the case needs. */
function withWindow(localStorage: () => unknown): void {
  Object.defineProperty(globalThis, "window", { configurable: true, value: { get localStorage() { return localStorage(); } } });
}

describe("browserStorage", () => {
  afterEach(() => {
    Reflect.deleteProperty(globalThis, "window");
  });

  it("is null where there is no window", () => {
    assert.equal(typeof window, "undefined");
    assert.equal(browserStorage(), null);
  });

  it("is the window's localStorage", () => {
    const storage = { getItem: () => null, setItem: () => undefined };
    withWindow(() => storage);
    assert.equal(browserStorage(), storage);
  });

  it("is null where the browser refuses storage", () => {
    withWindow(() => {
      throw new DOMException("The operation is insecure.", "SecurityError");
    });
    assert.equal(browserStorage(), null);
  });

  it("passes on any other failure", () => {
    withWindow(() => {
      throw new TypeError("not a refusal");
    });
    assert.throws(() => browserStorage(), TypeError);
  });
});
