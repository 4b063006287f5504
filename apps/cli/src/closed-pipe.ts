/**
 * Ends the process quietly when the reader of stdout or stderr goes away (`atskills … | head`): Node then
 * fails the next write with EPIPE, and an unhandled stream error would crash with a stack trace. Nothing
 * more can be said to a closed pipe, so the run stops with the exit code it has so far.
 */
export function exitQuietlyOnClosedPipe(streams: NodeJS.WriteStream[]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    });
  }
}
