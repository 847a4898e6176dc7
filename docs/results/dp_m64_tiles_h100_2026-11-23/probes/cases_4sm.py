[("W13 EP8", 64, False, [
   ((32,64,2,None,None),2,True,16,True,True),
   ((32,64,3,None,None),1,True,16,True,False),
   ((32,64,3,None,None),1,True,16,False,False),
   ((32,64,2,None,None),1,True,16,True,False),
   ((32,64,4,None,None),1,True,16,True,False),
   ((32,64,2,None,None),2,True,None,True,True),
 ]),
 ("W13 EP8", 56, False, [
   ((32,64,2,None,None),2,True,16,True,True),
   ((32,64,3,None,None),1,True,16,True,False),
 ]),
 ("W13 EP8", 72, False, [
   ((32,64,2,None,None),2,True,16,True,True),
   ((32,64,3,None,None),1,True,16,True,False),
 ]),
 ("W13 EP8", 48, False, [
   ((32,64,3,None,None),1,True,16,True,False),
 ]),
 ("W13 EP8, TP attention", 256, False, [
   ((32,64,3,None,None),1,True,16,True,False),
 ]),
]
