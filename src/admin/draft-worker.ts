// Worker entry of the draft pool: plans an admin API rules preview or replay-through-draft
// (src/pipeline/draft-preview.ts) off the HTTP thread, so a costly draft, or hundreds of
// events, never delays another request, and a run past its time can be cut off by ending
// the thread. Loaded through tsx's require hook on Node 20: no top-level await.
import { pluginsOnce, type PluginFolders } from '../destinations/load-plugins.ts';
import { runDraftTask, type DraftResult, type DraftTask } from '../pipeline/draft-preview.ts';

export interface DraftWorkerTask extends DraftTask {
  /** The plugin folders: the worker loads the plugins itself (they are code, not data). */
  pluginsDir: PluginFolders;
}

export default async function runDraftWorkerTask(task: DraftWorkerTask): Promise<DraftResult> {
  return runDraftTask(task, await pluginsOnce(task.pluginsDir));
}
