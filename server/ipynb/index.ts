/** .ipynb (nbformat 4) import and export. */
export { exportNotebook, ipynbFileName, toIpynb, toIpynbObject, type ExportableNotebook } from "./export";
export { importIpynb, parseIpynb, saveImported, type ImportedNotebook, type ImportOptions } from "./import";
export { IpynbError } from "./ipynb-error";
export { IPYNB_LIMITS, type IpynbLimits } from "./limits";
