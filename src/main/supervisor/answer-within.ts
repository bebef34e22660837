/**
 * An actor's answer over its control plane, or undefined when it has not come within `ms` (a busy
 * actor is left out of one report rather than holding it up) or came as an error.
 */
export async function answerWithin<T>(answer: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([answer, timeout]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
