/**
 * Form and template changes of templated cells: parameters re-render every
 * attached cell of a scenario or none, a detached cell is reattached (and
 * its Undo remembered), and each change runs one at a time, so each starts
 * from the values the last one left. Separate from the runtime because
 * rendering is asynchronous (the scenario catalog) and serialized on its own.
 */
import type { CellTemplate, ParameterValue } from "../core/protocol/notebook-model";
import { CommandError } from "../errors";
import { findCell } from "./notebook-ops";
import { ReattachUndo } from "./reattach-undo";
import { cellOf, type RuntimeContext } from "./runtime-context";
import { attachedSiblings, attachedTemplate, NO_TEMPLATES, scenarioOf, type TemplateRenderer } from "./template-cells";

export class TemplateWork {
  /** Form changes render asynchronously; one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  /** What each reattach replaced, for its Undo. */
  private readonly reattachUndo = new ReattachUndo();
  private readonly templates: TemplateRenderer;

  constructor(
    private readonly ctx: RuntimeContext,
    templates: TemplateRenderer | undefined,
  ) {
    this.templates = templates ?? NO_TEMPLATES;
  }

  /** Validated by the catalog with the scenario's other values; all attached cells of the scenario re-render, or none. */
  setParameters(cellId: string, values: Record<string, ParameterValue>): Promise<void> {
    return this.serially(async () => {
      // Names, types, ranges and cross-parameter limits are the catalog's to check (it refuses, nothing changes).
      const template = attachedTemplate(findCell(this.ctx.doc, cellId));
      const merged = { ...template.parameters, ...values };
      const targets = attachedSiblings(this.ctx.doc, scenarioOf(template.id));
      const rendered = await Promise.all(targets.map((cell) => this.templates.render(cell.template.id, merged)));
      // Rendering took a while: a cell deleted or detached meanwhile is left as it is now.
      await Promise.all(
        targets.map((target, i) => (cellOf(this.ctx.doc, target.id)?.template?.detached === false ? this.apply(target.id, rendered[i]!.source, rendered[i]!.template) : undefined)),
      );
    });
  }

  detach(cellId: string): Promise<void> {
    return this.serially(async () => {
      const cell = findCell(this.ctx.doc, cellId);
      await this.apply(cell.id, cell.source, { ...attachedTemplate(cell), detached: true });
    });
  }

  /** Re-renders a detached cell from the catalog; refuses (nothing changes) when the catalog cannot render it. */
  reattach(cellId: string): Promise<void> {
    return this.serially(async () => {
      const cell = findCell(this.ctx.doc, cellId);
      if (!cell.template) throw new CommandError("invalid", `cell ${cell.id} is not rendered from a template`);
      // An answer of ok must mean the code now comes from the catalog.
      if (!cell.template.detached) throw new CommandError("conflict", `cell ${cell.id} is already attached to template ${cell.template.id}; there is nothing to reattach`);
      const templateId = cell.template.id;
      const sibling = attachedSiblings(this.ctx.doc, scenarioOf(templateId))[0];
      const values = sibling?.template.parameters ?? cell.template.parameters;
      const rendered = await this.templates.render(templateId, values).catch((error: unknown) => {
        // The template may be unknown to this catalog or its values invalid (an imported file's claim): say which cell and why.
        throw error instanceof CommandError ? new CommandError(error.code, `cell ${cell.id} cannot be reattached to template ${templateId}: ${error.message}`) : error;
      });
      const current = cellOf(this.ctx.doc, cell.id);
      if (!current?.template) return;
      this.reattachUndo.remember(cell.id, { source: current.source, template: current.template });
      await this.apply(cell.id, rendered.source, rendered.template);
    });
  }

  undoReattach(cellId: string): Promise<void> {
    return this.serially(async () => {
      const replaced = this.reattachUndo.take(this.ctx.doc, cellId);
      await this.apply(cellId, replaced.source, replaced.template);
    });
  }

  private serially(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async apply(cellId: string, source: string, template: CellTemplate): Promise<void> {
    this.ctx.events.emit({ type: "cell-template", cellId, template, source });
    await this.ctx.persistence.setTemplate(cellId, source, template);
  }
}
