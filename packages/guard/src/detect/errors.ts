/** Thrown by a scan that passes its `deadline`; the service maps it to its timeout error. */
export class DetectionTimeout extends Error {
  constructor(message = 'Detection exceeded its deadline') {
    super(message);
    this.name = 'DetectionTimeout';
  }
}

/** Throws DetectionTimeout when `deadline` (epoch ms) has passed; a missing deadline never expires. */
export function checkDeadline(deadline: number | undefined): void {
  if (deadline !== undefined && Date.now() > deadline) throw new DetectionTimeout();
}
