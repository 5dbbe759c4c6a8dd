// A question waits where the user may not be looking (issue 40): with the chat view hidden,
// the turn waited unseen. While a question waits, the view shows a badge (on its icon in
// the activity bar), the status bar an item that opens the chat, and, when the view is
// hidden, one notification with an "Open Chat" button. All go once nothing waits.
import * as vscode from "vscode";

export interface Shown {
  /** Whether the chat view is visible now. */
  visible(): boolean;
  /** The view's badge: a count, or 0 for none. */
  badge(count: number, tooltip: string): void;
}

export const OPEN = "Open Chat";

export class Attention {
  private waiting = 0;
  private item?: vscode.StatusBarItem;

  constructor(
    private readonly view: () => Shown | undefined,
    private readonly focus: () => Thenable<unknown>,
  ) {}

  /** A question starts waiting; `prompt` is its text. */
  asked(prompt: string): void {
    this.waiting++;
    this.update();
    const shown = this.view();
    if (shown?.visible()) return;
    const line = (prompt.split("\n", 1)[0] ?? "").slice(0, 160);
    void Promise.resolve(vscode.window.showWarningMessage(`Elelem asks: ${line}`, OPEN)).then((choice) => {
      if (choice === OPEN) void this.focus();
    });
  }

  /** A question stopped waiting (answered, dismissed, or its turn ended). */
  done(): void {
    this.waiting = Math.max(0, this.waiting - 1);
    this.update();
  }

  private update(): void {
    const tooltip = this.waiting === 1 ? "Elelem asks a question" : `Elelem asks ${this.waiting} questions`;
    this.view()?.badge(this.waiting, tooltip);
    if (this.waiting === 0) {
      this.item?.hide();
      return;
    }
    if (!this.item) {
      this.item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 1000);
      this.item.command = "elelem.chat.focus";
    }
    this.item.text = `$(question) Elelem asks${this.waiting > 1 ? ` (${this.waiting})` : ""}`;
    this.item.tooltip = `${tooltip}: open the chat`;
    this.item.show();
  }

  dispose(): void {
    this.item?.dispose();
  }
}
