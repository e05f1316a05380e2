/**
 * A finished turn's output, rendered by kandev-nb (issue 35): a JupyterLab MIME renderer.
 *
 * When a turn ends in a tab, the kernel replaces its live view by the static rendering
 * (text/html, text/markdown, text/plain) and adds `TURN_MIME` (`{"version": 1}`) to the
 * bundle. Ranked ahead of text/html, this renderer then draws that same text/html as
 * JupyterLab's own HTML renderer would (Lab's `renderHTML`: links hardened, URLs resolved), but
 * without the MathJax pass Lab's HTML renderer runs over every HTML output (the rendering is
 * marked never to be typeset). Measured at the swap of a 112 KB answer
 * (`benchmarks/bench_browser.py --trace`): Lab's output rendering 46 -> 24 ms. JupyterLab's table
 * of contents still sanitizes every output's text/html for its headings, whatever renders it
 * (`CodeCell.getHeadings`). Untrusted outputs never reach this renderer (not `safe`): Lab shows
 * their text/html sanitized, as before. Frontends without this extension (VS Code, nbconvert,
 * Colab) ignore the MIME type and show the text/html.
 */

import { renderHTML } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

/** The marker the kernel adds (kandev_nb.notebook.answers.TURN_MIME). */
export const TURN_MIME = 'application/vnd.kandev-nb.turn+json';

/** Ahead of text/html (50), behind the widget view (0). */
const RANK = 40;

/** Draws the bundle's text/html of a finished turn (see the module's notes). */
export class TurnRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(private readonly options: IRenderMime.IRendererOptions) {
    super();
    // The classes Lab's HTML renderer gives its node: the saved rendering's CSS expects them.
    this.addClass('jp-RenderedHTMLCommon');
    this.addClass('jp-RenderedHTML');
    this.addClass('kandev-rendered-turn');
    this.node.dataset['mimeType'] = 'text/html';
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const source = model.data['text/html'];
    await renderHTML({
      host: this.node,
      // A saved notebook may hold the HTML as a list of lines (nbformat's multiline string).
      source: Array.isArray(source) ? source.join('') : typeof source === 'string' ? source : '',
      trusted: model.trusted,
      sanitizer: this.options.sanitizer,
      resolver: this.options.resolver,
      linkHandler: this.options.linkHandler,
      shouldTypeset: false,
      latexTypesetter: null,
      translator: this.options.translator
    });
  }
}

const rendererFactory: IRenderMime.IRendererFactory = {
  safe: false,
  mimeTypes: [TURN_MIME],
  defaultRank: RANK,
  createRenderer: options => new TurnRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'kandev-nb:turn-renderer',
  description: "A finished %%claude turn's output, drawn without a MathJax pass.",
  rendererFactory,
  rank: RANK,
  dataType: 'json'
};

export default extension;
