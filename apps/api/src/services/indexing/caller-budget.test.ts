import { describe, expect, it } from 'vitest';
import { CallerBudget } from './caller-budget.js';

describe('CallerBudget', () => {
  it('allows perMinute requests per caller and window, then says how long to wait', () => {
    let now = 1_000_000;
    const budget = new CallerBudget(2, () => now);
    expect(budget.take('ip:a')).toBe(0);
    expect(budget.take('ip:a')).toBe(0);
    expect(budget.take('ip:b')).toBe(0);
    now += 15_000;
    expect(budget.take('ip:a')).toBe(45);
    now += 45_000;
    expect(budget.take('ip:a')).toBe(0);
  });
});
