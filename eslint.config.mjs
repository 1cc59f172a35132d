// Type-aware lint for the whole repo: the checks that catch real bugs here
// (floating promises in socket handlers, misused promises in callbacks), and
// the layering (README, "How it fits together"), so it cannot rot.
import tseslint from "typescript-eslint";
import nextPlugin from "@next/eslint-plugin-next";
import { createNodeResolver, importX } from "eslint-plugin-import-x";

const root = import.meta.dirname;

/**
 * No import from a lower layer to a higher one. server/core is shared with
 * the browser: it imports only itself, and of the npm packages only zod (a
 * package there must run in a browser; add it here once it is checked).
 * The browser (components/, app/) may import server/core and nothing else of
 * server/, which is Node.js code; the server never imports the browser's
 * code. Within components/, shell/ (page chrome and what every feature
 * uses) imports no feature folder. tests/ may import anything.
 */
const LAYER_ZONES = [
  {
    target: "./server/core",
    from: "./",
    except: ["./server/core", "./node_modules/zod"],
    message: "server/core is shared with the browser: it imports only server/core (and zod). Move what it needs into server/core.",
  },
  {
    target: ["./components", "./app"],
    from: "./server",
    except: ["./core"],
    message: "The browser may import server/core only; the rest of server/ is Node.js code. Move what both need into server/core.",
  },
  {
    // The bottom of the browser's code: page chrome and what every feature uses. A feature imports it, never the reverse.
    target: "./components/shell",
    from: "./components",
    except: ["./shell"],
    message: "components/shell is what every feature uses: it imports no feature folder. Move what it needs into components/shell.",
  },
  {
    // server/core has its own, stricter zone above.
    target: ["./server/!(core)/**", "./server/*"],
    from: ["./components", "./app"],
    message: "server/ never imports the browser's code (components/, app/). Move what both need into server/core.",
  },
];

/**
 * All database access goes through server/persistence's repositories: no
 * other server module imports the Prisma client (or its generated code, or
 * an adapter that takes it) or reaches one — a Database's `.prisma`, a
 * transaction, a raw query. A query a feature needs is a repository method,
 * named for what it means to its caller. tests/ may use the client.
 */
const PERSISTENCE_ONLY = "Database access goes through server/persistence: add a repository method there (named for what it means to its caller) and call that; only server/persistence touches the Prisma client.";
const PRISMA_OUTSIDE_PERSISTENCE = [
  { selector: "ImportSpecifier[imported.name='PrismaClient'], ExportSpecifier[local.name='PrismaClient']", message: PERSISTENCE_ONLY },
  { selector: "MemberExpression[property.name='prisma'], MemberExpression[property.value='prisma'], ObjectPattern > Property[key.name='prisma']", message: PERSISTENCE_ONLY },
  { selector: "MemberExpression[property.name=/^\\$(transaction|queryRaw|queryRawUnsafe|executeRaw|executeRawUnsafe|runCommandRaw|extends)$/]", message: PERSISTENCE_ONLY },
];

export default tseslint.config(
  { ignores: ["node_modules/", ".next/", "out/", "data/", "server/persistence/generated/", "**/*.js", "**/*.mjs"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { "@next/next": nextPlugin, "import-x": importX },
    settings: {
      // Resolves imports as TypeScript does here (extensionless paths, "@/" from tsconfig), so each is checked where it really points.
      "import-x/resolver-next": [createNodeResolver({ extensions: [".ts", ".tsx", ".js", ".mjs", ".json"], tsconfig: { configFile: `${root}/tsconfig.json` } })],
    },
    rules: {
      ...nextPlugin.configs.recommended.rules,
      "@typescript-eslint/no-floating-promises": ["error", { allowForKnownSafeCalls: [{ from: "package", name: ["describe", "it", "test", "before", "after"], package: "node:test" }] }],
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { attributes: false } }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": ["error", { allow: ["warn", "error"] }],
      "import-x/no-restricted-paths": ["error", { basePath: root, zones: LAYER_ZONES }],
    },
  },
  {
    // The browser bundles server/core as it is: no Node.js module, no Node.js global.
    files: ["server/core/**/*.ts"],
    rules: {
      "import-x/no-nodejs-modules": "error",
      "no-restricted-globals": ["error", ...["Buffer", "process", "require", "module", "__dirname", "__filename", "global", "setImmediate"].map((name) => ({ name, message: "server/core runs in the browser too: no Node.js globals." }))],
    },
  },
  {
    files: ["server/**/*.ts"],
    ignores: ["server/persistence/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["**/persistence/generated*", "**/persistence/generated*/**", "@prisma/*", "better-auth/adapters/prisma"], message: PERSISTENCE_ONLY }] }],
      "no-restricted-syntax": ["error", ...PRISMA_OUTSIDE_PERSISTENCE],
    },
  },
  {
    files: ["tests/**/*.ts", "scripts/**/*.ts"],
    rules: { "no-console": "off" },
  },
);
