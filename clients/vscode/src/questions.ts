// `input/ask` as the chat asks it: a permission question goes into the chat (issue 31,
// `elelem.askInChat`, the default), as buttons in the waiting tool call's card, so nothing
// takes the keyboard; other questions, and all with the setting off, go to input.ts (an
// input box or a quick pick at the top of the window).
import * as vscode from "vscode";
import type { CancellationToken } from "vscode-jsonrpc/node";
import type { Attention } from "./attention";
import type { ViewMessage } from "./chat";
import { askUser, permissionChoices } from "./input";
import type { AskParams } from "./protocol";

interface Waiting {
  choices: string[];
  answer(text: string | undefined): void;
}

export class Questions {
  private next = 1;
  private readonly waiting = new Map<number, Waiting>();

  /** `show` posts to the chat (and its transcript); `hasView`: a chat view exists to ask in. */
  constructor(
    private readonly show: (message: ViewMessage) => void,
    private readonly hasView: () => boolean,
    private readonly attention?: Pick<Attention, "asked" | "done">,
  ) {}

  /** The user's answer, or undefined when there is none (dismissed, or the turn was stopped). */
  async ask(params: AskParams, token: CancellationToken): Promise<string | undefined> {
    // With no chat view to show it in (never opened), the quick pick asks instead.
    const inChat = params.kind === "permission" && this.hasView() && vscode.workspace.getConfiguration("elelem").get<boolean>("askInChat", true);
    const askId = this.next++;
    const choices = inChat ? permissionChoices(params) : [];
    this.show({
      type: "ask",
      askId,
      prompt: params.prompt,
      kind: params.kind ?? "question",
      tool: params.tool,
      ...(inChat ? { choices } : {}),
    });
    let answer: string | undefined;
    if (inChat) {
      this.attention?.asked(params.prompt ?? "a question");
      answer = await new Promise<string | undefined>((resolve) => {
        const cancelled = token.onCancellationRequested(() => resolve(undefined));
        this.waiting.set(askId, {
          choices: choices.map((c) => c.answer),
          answer: (text) => {
            cancelled.dispose();
            resolve(text);
          },
        });
        if (token.isCancellationRequested) resolve(undefined);
      });
      this.waiting.delete(askId);
      this.attention?.done();
    } else answer = await askUser(params, token);
    this.show({ type: "answer", askId, text: answer ?? null });
    return answer;
  }

  /** A button of an in-chat question: only one of the answers it offered, and only once. */
  answered(askId: number, answer: string): void {
    const waiting = this.waiting.get(askId);
    if (!waiting || !waiting.choices.includes(answer)) return;
    this.waiting.delete(askId);
    waiting.answer(answer);
  }
}
