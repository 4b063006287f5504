import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';

// Only this file listens; everything else is built by buildApp so tests use the same app.
try {
  const config = loadConfig(process.env);
  const app = await buildApp(config);
  const close = async (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void close('SIGINT'));
  process.once('SIGTERM', () => void close('SIGTERM'));
  await app.listen({ host: config.host, port: config.port });
} catch (err) {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(err);
  process.exit(1);
}
